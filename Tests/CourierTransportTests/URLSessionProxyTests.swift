import Courier
import CourierCurl
import CourierTestServer
import Foundation
import Testing

@testable import CourierURLSession

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// FoundationNetworking's libcurl follows the environment's proxy variables and has no setting of
/// its own: the URLSession transport takes exactly the configuration the environment makes.
@Suite("URLSession and proxies: only what the environment makes its libcurl do")
struct URLSessionProxyTests {
    private func problem(_ proxy: ProxyConfiguration, _ environment: [String: String]) -> ConfigurationError? {
        URLSessionTransport.Configuration.proxyProblem(proxy, environment: environment, by: "urlsession")
    }

    @Test("no proxy and no variable, or proxy: environment matching the variables, is taken")
    func taken() throws {
        #expect(problem(.none, [:]) == nil)
        #expect(problem(.none, ["HTTP_PROXY": "http://ignored:1", "http_proxy": ""]) == nil)
        // An exclusion list without a proxy changes nothing: neither the variable nor the key.
        #expect(problem(.none, ["no_proxy": "localhost,127.0.0.1,host:8080"]) == nil)
        var excluding = ProxyConfiguration.none
        excluding.noProxy = [try ProxyExclusion("internal")]
        #expect(problem(excluding, [:]) == nil)
        let environment = ["https_proxy": "http://corp:8080", "no_proxy": "internal"]
        #expect(problem(try ProxyConfiguration.environment(environment), environment) == nil)
    }

    @Test("no proxy while a variable is set, a proxy in code, or a variable Courier cannot read is refused, naming proxy")
    func refused() throws {
        let cases: [(ProxyConfiguration, [String: String], String)] = [
            (.none, ["https_proxy": "http://corp:8080"], "cannot be told not to"),
            (.none, ["ALL_PROXY": "corp:8080"], "cannot be told not to"),
            (try ProxyConfiguration(server: "http://corp:8080"), [:], "no proxy setting"),
            (try ProxyConfiguration(server: "http://corp:8080"), ["http_proxy": "http://other:1"], "no proxy setting"),
            (.none, ["all_proxy": "socks5://corp:1080"], "all_proxy"),
        ]
        for (proxy, environment, words) in cases {
            let error = problem(proxy, environment)
            #expect(error?.key == "proxy" && error?.allowed.contains(words) == true, "\(environment): \(error.map { "\($0)" } ?? "taken")")
        }
    }

    @Test("with a proxy, a no_proxy entry its libcurl reads otherwise than Courier is refused, naming it; the ones read alike are taken")
    func noProxyReadAlike() throws {
        let proxied = ["https_proxy": "http://corp:8080"]
        for list in [
            "a,*", "*.localhost", "*.example.com", "..example.com", "0.0.0.0/0", "127.0.0.1.", "[127.0.0.1]", "[::1]",
            "0:0:0:0:0:0:0:1", "::1/128", "fd00::/8",
        ] {
            let environment = proxied.merging(["no_proxy": list]) { $1 }
            // Courier reads it: the refusal is this rule's, not the variable's.
            let followed = try #require(try? ProxyConfiguration.environment(environment), "\(list)")
            let error = problem(followed, environment)
            #expect(
                error?.key == "proxy" && error?.allowed.contains("otherwise than Courier") == true, "\(list): \(String(describing: error))")
        }
        for list in ["*", "localhost", ".example.com", "example.com.", "EXAMPLE.com", "127.0.0.1", "127.0.0.0/8", "::1", "fd00::1", "a, b"]
        {
            let environment = proxied.merging(["no_proxy": list]) { $1 }
            #expect(problem(try ProxyConfiguration.environment(environment), environment) == nil, "\(list)")
        }
        let blank = proxied.merging(["no_proxy": " ", "NO_PROXY": "internal"]) { $1 }
        #expect(problem(try ProxyConfiguration.environment(blank), blank)?.allowed.contains("beside NO_PROXY") == true)
        // Without a proxy, no list matters.
        #expect(problem(.none, ["no_proxy": "*.localhost"]) == nil)
    }

    @Test("curl and ahc refuse to run with a proxy other than the client's, naming proxy")
    func transportsMadeWithAnotherProxy() throws {
        var settings = CurlTransport.Configuration()
        settings.proxy = try ProxyConfiguration(server: "http://elsewhere:3128")
        let curl = try CurlTransport(configuration: settings)
        defer { Task { await curl.shutdown() } }
        #expect(throws: ConfigurationError.self) { try curl.checkSettings(of: ClientConfiguration()) }
        do {
            _ = try NetworkClient(configuration: ClientConfiguration(), transport: curl)
            Issue.record("a client that says no proxy ran on a transport made with one")
        } catch {
            #expect(error.key == "proxy", "\(error)")
        }
        var client = ClientConfiguration()
        client.proxy = settings.proxy
        try curl.checkSettings(of: client)
        #if AsyncHTTPClient
            var ahcSettings = AsyncHTTPClientTransport.Configuration()
            ahcSettings.proxy = settings.proxy
            let ahc = try AsyncHTTPClientTransport(configuration: ahcSettings)
            defer { Task { await ahc.shutdown() } }
            #expect(throws: ConfigurationError.self) { try ahc.checkSettings(of: ClientConfiguration()) }
            try ahc.checkSettings(of: client)
        #endif
    }

    /// An https server URLSession cannot trust (it has no way to add the test CA) fails the call
    /// as `tls_failure` in phase `tls`, directly and through the environment's proxy alike. In a
    /// child process (`CourierURLSessionProbe`): the proxy variables are the process's own.
    @Test("a TLS failure is tls_failure, directly and through the environment's proxy")
    func tlsFailureThroughProxy() async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierURLSessionProbe"),
            "build CourierURLSessionProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        let server = try await TestServer.start(mode: .tls)
        let proxy = try await ForwardProxy.start()
        let url = "https://localhost:\(server.port)/echo"
        let direct = try await ChildProcess.run(probe, [url], timeout: .seconds(60))
        let proxied = try await ChildProcess.run(probe, [url], environment: ["https_proxy": proxy.url], timeout: .seconds(60))
        let reached = proxy.requests.count
        await proxy.shutdown()
        await server.shutdown()
        for (name, outcome) in [("direct", direct), ("proxied", proxied)] {
            #expect(!outcome.timedOut && outcome.status == 0, "\(name): \(outcome.errors.prefix(2000))")
            #expect(outcome.output.contains("failed: NetworkError.tls_failure (phase: tls)"), "\(name): \(outcome.output)")
        }
        #expect(reached == 1, "the proxied call did not go through the proxy")
    }
}
