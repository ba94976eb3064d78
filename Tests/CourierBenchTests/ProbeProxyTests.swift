import CourierTestServer
import Foundation
import Testing

@testable import CourierBenchKit

/// The environment's proxy variables, in a process of their own (`courier-bench probe`): followed
/// only when asked for, and then the same way on every transport.
@Suite("courier-bench probe through a proxy the environment names", .serialized, .timeLimit(.minutes(5)))
struct ProbeProxyTests {
    /// Runs `courier-bench probe URL --json` with `arguments` and `environment`, and decodes a
    /// line per transport.
    private func probe(_ url: String, _ arguments: [String], environment: [String: String]) async throws -> [Probe.Outcome] {
        let outcome = try await ChildProcess.run(
            try TinyRunTests.executable(), ["probe", url, "--json"] + arguments, environment: environment, timeout: .seconds(60))
        let lines = outcome.output.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(!lines.isEmpty, "\(outcome.output) \(outcome.errors)")
        return try lines.map { try JSONDecoder().decode(Probe.Outcome.self, from: Data($0.utf8)) }
    }

    /// Every variable libcurl would follow, aimed at `proxy`.
    private func variables(_ proxy: ForwardProxy) -> [String: String] {
        ["http_proxy": proxy.url, "https_proxy": proxy.url, "HTTPS_PROXY": proxy.url, "all_proxy": proxy.url, "ALL_PROXY": proxy.url]
    }

    @Test("with proxy variables set, curl and ahc go directly unless told otherwise; URLSession, which would follow them, refuses")
    func environmentNotFollowed() async throws {
        let server = try await TestServer.start(mode: .http1)
        let proxy = try await ForwardProxy.start()
        let outcomes = try await probe(server.baseURL + "/echo", [], environment: variables(proxy))
        let seen = proxy.requests
        await proxy.shutdown()
        await server.shutdown()
        for outcome in outcomes {
            switch outcome.transport {
            case "urlsession":
                #expect(outcome.errorKind == "configuration" && outcome.errorMessage?.contains("proxy") == true, "\(outcome)")
            case "ahc" where outcome.errorKind == "unsupported":
                break  // this build does not link AsyncHTTPClient
            default:
                #expect(outcome.status == 200 && outcome.proxy == "direct", "\(outcome)")
            }
        }
        #expect(seen.isEmpty, "a transport followed the environment's proxy on its own: \(seen)")
    }

    @Test("--proxy environment sends every transport's call through the proxy the variables name")
    func environmentFollowedWhenAsked() async throws {
        let server = try await TestServer.start(mode: .http1)
        let proxy = try await ForwardProxy.start()
        let outcomes = try await probe(server.baseURL + "/echo", ["--proxy", "environment"], environment: variables(proxy))
        let seen = proxy.requests
        await proxy.shutdown()
        await server.shutdown()
        let carried = outcomes.filter { $0.errorKind != "unsupported" }
        #expect(carried.count >= 2, "\(outcomes)")
        for outcome in carried {
            #expect(outcome.status == 200 && outcome.proxy == proxy.url, "\(outcome)")
        }
        // One request each: curl's and URLSession's libcurl forward plain http, ahc tunnels it.
        #expect(seen.count == carried.count && seen.allSatisfy(\.carried), "\(seen)")
        #expect(seen.allSatisfy { $0.target.contains("127.0.0.1:\(server.port)") }, "\(seen)")
    }

    @Test("a proxy given on the command line is used even where NO_PROXY=* says not to: Courier decided, not libcurl")
    func configuredProxyIgnoresNoProxyVariable() async throws {
        let server = try await TestServer.start(mode: .http1)
        let proxy = try await ForwardProxy.start()
        let outcomes = try await probe(
            server.baseURL + "/echo", ["--proxy", proxy.url, "--transport", "curl"],
            environment: ["NO_PROXY": "*", "no_proxy": "127.0.0.1"])
        let seen = proxy.requests
        await proxy.shutdown()
        await server.shutdown()
        #expect(outcomes.map(\.status) == [200], "\(outcomes)")
        #expect(seen.count == 1 && seen.first?.carried == true, "curl went direct after all: \(seen)")
    }
}
