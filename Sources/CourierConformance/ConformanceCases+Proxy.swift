import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Calls go through the configured forward proxy, with its credentials, and nowhere else: the
/// same on every transport (issue 42).
extension ConformanceCases {
    /// A client of `transport` for `server` through `proxy`, or `nil` after checking that a
    /// transport which cannot honour the setting refuses it, naming `proxy`.
    private static func proxiedClient(
        _ transport: ConformanceTransport, _ server: TestServer, _ proxy: ProxyConfiguration,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> NetworkClient? {
        guard transport.proxying != .environmentOnly else {
            do {
                let client = try transport.makeClient(server) { $0.proxy = proxy }
                Issue.record("\(transport.name) took a proxy it cannot honour", sourceLocation: sourceLocation)
                Task { await client.shutdown() }
            } catch let error as ConfigurationError {
                #expect(error.key == ConfigurationKey.proxy.name, "\(error)", sourceLocation: sourceLocation)
            }
            return nil
        }
        return try transport.makeClient(server) {
            $0.proxy = proxy
            // These cases check where calls go, not how fast: a proxied TLS connection is the
            // longest chain of serial steps (ahc builds its TLS context only after the CONNECT),
            // and a fully loaded 2-core run has stretched it past the default 10 s.
            $0.connectTimeout = .seconds(30)
        }
    }

    /// What the proxy is asked for a call to `server`'s `path`: a `CONNECT` to its authority, or
    /// the absolute URL forwarded.
    private static func expectedProxyRequest(
        _ transport: ConformanceTransport, _ server: TestServer, path: String
    ) -> (method: String, target: String) {
        let host = server.mode.usesTLS ? "localhost" : "127.0.0.1"
        if server.mode.usesTLS || transport.proxying == .tunnelsEverything { return ("CONNECT", "\(host):\(server.port)") }
        return ("", "http://\(host):\(server.port)\(path)")
    }

    /// A call goes through the proxy: tunnelled for https (and on a transport that only
    /// tunnels), forwarded in absolute form for plain http. A body arrives whole, and the server
    /// sees the call as it was made.
    public static func proxyCarriesCalls(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            try await withProxy { proxy in
                guard let client = try proxiedClient(transport, server, try ProxyConfiguration(server: proxy.url)) else { return }
                let echo = try await client.send(EchoEndpoint(method: .post, headers: ["X-Team": "payments"], body: .text("through")))
                #expect(echo.method == "POST" && echo.body == "through" && echo.header("x-team") == "payments")
                let expected = expectedProxyRequest(transport, server, path: "/echo")
                let seen = proxy.requests
                #expect(!seen.isEmpty && seen.allSatisfy(\.carried), "\(seen)")
                #expect(seen.first?.target == expected.target, "\(seen)")
                if expected.method == "CONNECT" { #expect(seen.first?.method == "CONNECT") }
                #expect(server.requestCount == 1)
                await client.shutdown()
            }
        }
    }

    /// A proxy that asks for credentials: without them, or with wrong ones, the call fails as
    /// `proxy_failure` with status 407 (the password never in the message), and the server sees
    /// nothing; with them it goes through, and the server never sees `Proxy-Authorization`.
    public static func proxyCredentials(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            try await withProxy(credentials: ("courier", "pr0xy-s3cret")) { proxy in
                let url = proxy.url.replacingOccurrences(of: "http://", with: "http://courier:%s@")
                guard let refused = try proxiedClient(transport, server, try ProxyConfiguration(server: proxy.url)) else { return }
                let none = await expectNetworkError(.proxyFailure) { try await refused.send(EchoEndpoint()) }
                #expect(none?.status == 407 && none?.message.contains("wants credentials") == true, "\(none.map { "\($0)" } ?? "")")
                await refused.shutdown()
                let wrong = try #require(
                    try proxiedClient(
                        transport, server, try ProxyConfiguration(server: url.replacingOccurrences(of: "%s", with: "wr0ng-guess"))))
                let bad = await expectNetworkError(.proxyFailure) { try await wrong.send(EchoEndpoint()) }
                #expect(bad?.status == 407 && bad?.message.contains("refused the credentials") == true, "\(bad.map { "\($0)" } ?? "")")
                #expect(bad.map { "\($0)".contains("wr0ng-guess") } == false, "the password is in the error")
                await wrong.shutdown()
                #expect(server.requestCount == 0, "a call the proxy refused reached the server")
                let right = try #require(
                    try proxiedClient(
                        transport, server, try ProxyConfiguration(server: url.replacingOccurrences(of: "%s", with: "pr0xy-s3cret"))))
                let echo = try await right.send(EchoEndpoint())
                #expect(echo.path == "/echo")
                #expect(echo.header("proxy-authorization") == nil, "the proxy's credential reached the server")
                let basic = "Basic " + Data("courier:pr0xy-s3cret".utf8).base64EncodedString()
                #expect(proxy.requests.last?.proxyAuthorization == basic && proxy.requests.last?.carried == true, "\(proxy.requests)")
                await right.shutdown()
            }
        }
    }

    /// A server on the no-proxy list (by name, address or network) is reached directly, and a
    /// proxy that is not there fails the call as `connect_failure`: never a silent direct call.
    public static func proxyExclusionsAndAbsence(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            try await withProxy { proxy in
                let lists = server.mode.usesTLS ? [["localhost"], [".localhost"], ["*"]] : [["127.0.0.1"], ["127.0.0.0/8"], ["*"]]
                for list in lists {
                    let settings = try ProxyConfiguration(server: proxy.url, noProxy: list)
                    guard let client = try proxiedClient(transport, server, settings) else { return }
                    let echo = try await client.send(EchoEndpoint())
                    #expect(echo.path == "/echo")
                    await client.shutdown()
                }
                #expect(proxy.requests.isEmpty, "an excluded server went through the proxy: \(proxy.requests)")
                let absent = try RefusingPort()
                defer { absent.close() }
                let settings = try ProxyConfiguration(server: "http://127.0.0.1:\(absent.port)")
                let before = server.requestCount
                guard let client = try proxiedClient(transport, server, settings) else { return }
                await expectNetworkError(.connectFailure) { try await client.send(EchoEndpoint()) }
                #expect(server.requestCount == before, "a call whose proxy is down went directly")
                await client.shutdown()
            }
        }
    }

    /// A certificate the client does not trust fails the call as `tls_failure` in phase `tls`
    /// through the proxy's tunnel, as it does without a proxy: one kind for one failure.
    public static func proxyTLSFailure(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: .tls) { server in
            try await withProxy { proxy in
                let settings = try ProxyConfiguration(server: proxy.url)
                // (URLSession takes only the environment's proxy: `URLSessionProxyTests.tlsFailureThroughProxy`
                // checks it in a child process.)
                guard transport.proxying != .environmentOnly else { return }
                for proxied in [true, false] {
                    // No test CA: the server's certificate is not trusted.
                    let client = try transport.makeClient(baseURL: server.baseURL) {
                        if proxied { $0.proxy = settings }
                        $0.connectTimeout = .seconds(30)
                    }
                    let error = await expectNetworkError(.tlsFailure) { try await client.send(EchoEndpoint()) }
                    #expect(error?.phase == .tls, "proxied \(proxied): \(String(describing: error))")
                    await client.shutdown()
                }
                #expect(!proxy.requests.isEmpty, "the proxied call did not reach the proxy")
            }
        }
    }

    /// Runs `body` with a fresh loopback proxy, and shuts it down afterwards.
    private static func withProxy(
        credentials: (user: String, password: String)? = nil, _ body: (ForwardProxy) async throws -> Void
    ) async throws {
        let proxy = try await ForwardProxy.start(credentials: credentials)
        do {
            try await body(proxy)
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }
}
