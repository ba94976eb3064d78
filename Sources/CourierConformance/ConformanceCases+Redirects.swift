import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Redirects: every transport does one exchange and the chain's follow-up link applies
/// ``FollowUp``'s rules, so these cases read the same on every transport.
extension ConformanceCases {
    /// The redirect statuses.
    public static let redirectStatuses = [301, 302, 303, 307, 308]

    /// How a redirect target differs from the origin that redirected.
    public enum OriginChange: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Another port on the same host.
        case port
        /// Another host name for the same server (`127.0.0.1` to `localhost`).
        case host
        /// `http` to `https`.
        case scheme
        /// A protocol-relative `Location` (`//localhost:PORT/echo`).
        case protocolRelative

        public var testDescription: String { rawValue }
    }

    /// redirects are followed up to the limit, and each hop is counted.
    public static func redirects(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) { $0.maxRedirects = 3 }
            let response = try await client.response(for: EchoEndpoint(path: "redirect/3"))
            #expect(response.value.path == "/echo")
            #expect(response.metrics.redirects == 3)
            #expect(response.metrics.attempts == 4)
            let error = await expectNetworkError(.tooManyRedirects) { try await client.send(EchoEndpoint(path: "redirect/5")) }
            #expect(error?.status == 302)
            await client.shutdown()
        }
    }

    /// Same-origin hops keep every header; a hop to another origin (port, host, scheme or a
    /// protocol-relative `Location`) carries only the safelist, whatever the redirect status.
    public static func redirectCrossOrigin(_ transport: ConformanceTransport, status: Int) async throws {
        try await withServer { first in
            try await withServer { second in
                try await withServer(mode: .tls) { secure in
                    let client = try transport.makeClient(first) { configuration in
                        configuration.secretHeaderNames = ["x-internal-token"]
                        if transport.privateCA == .trusted { configuration.tls.caPEM = TestCertificates.caPEM }
                    }
                    let headers: RequestHeaders = [
                        "Authorization": "Bearer s3cret", "Cookie": "session=abc", "X-Api-Key": "k3y", "X-Internal-Token": "t0k",
                        "X-Custom": "c", "Accept": "application/json", "Accept-Language": "fr", "Baggage": "user=alice",
                    ]
                    let dropped = ["authorization", "cookie", "x-api-key", "x-internal-token", "x-custom", "baggage"]
                    for change in OriginChange.allCases {
                        let target: String
                        let receiver: TestServer
                        switch change {
                        case .port: (target, receiver) = ("\(second.baseURL)/echo", second)
                        case .host: (target, receiver) = ("http://localhost:\(first.port)/echo", first)
                        case .scheme: (target, receiver) = ("https://127.0.0.1:\(secure.port)/echo", secure)
                        case .protocolRelative: (target, receiver) = ("//localhost:\(second.port)/echo", second)
                        }
                        let before = receiver.requestCount
                        let call = EchoEndpoint(
                            path: "redirect-to", query: [QueryItem("url", target), QueryItem("status", "\(status)")], headers: headers)
                        if change == .scheme, transport.privateCA == .refused {
                            // This transport cannot trust the test CA: the hop fails in the TLS handshake,
                            // before any header is sent.
                            await expectNetworkError(.tlsFailure) { try await client.send(call) }
                            #expect(secure.requestCount == 0)
                            continue
                        }
                        let response = try await client.response(for: call)
                        let echo = response.value
                        // The host change goes back to the server that redirected: it counts both requests.
                        #expect(receiver.requestCount == before + (change == .host ? 2 : 1), "\(change)")
                        #expect(response.metrics.redirects == 1)
                        for name in dropped { #expect(echo.header(name) == nil, "\(name) reached another origin (\(change), \(status))") }
                        #expect(echo.header("accept") == "application/json", "\(change)")
                        #expect(echo.header("accept-language") == "fr", "\(change)")
                    }
                    let sameOrigin = try await client.send(
                        EchoEndpoint(
                            path: "redirect-to", query: [QueryItem("url", "/echo"), QueryItem("status", "\(status)")], headers: headers))
                    for name in dropped { #expect(sameOrigin.header(name) != nil, "\(name) must stay on the same origin") }
                    await client.shutdown()
                }
            }
        }
    }

    /// https to http and every scheme but http and https are refused with their own kind, and
    /// nothing is sent to the target.
    public static func redirectRefused(_ transport: ConformanceTransport) async throws {
        // https to http needs a transport that trusts the test CA for the first hop.
        if transport.privateCA == .trusted {
            try await withServer(mode: .tls) { secure in
                try await withServer { plain in
                    let client = try transport.makeClient(secure)
                    let downgrade = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", "\(plain.baseURL)/echo")])
                    let error = await expectNetworkError(.redirectRefused) { try await client.send(downgrade) }
                    #expect(error?.status == 302)
                    #expect(plain.requestCount == 0)
                    await client.shutdown()
                }
            }
        }
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for location in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1:70/x", "data:text/plain,hello"] {
                let before = server.requestCount
                let call = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", location)])
                let error = await expectNetworkError(.redirectRefused) { try await client.send(call) }
                let scheme = String(location.prefix { $0 != ":" })
                #expect(error?.message.contains(scheme) == true, "\(error?.message ?? "")")
                #expect(server.requestCount == before + 1, "only the redirecting request reached a server")
            }
            await client.shutdown()
        }
    }

    /// A `Location` with control characters or an encoded CR/LF never becomes a request.
    public static func redirectMalformedLocation(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for location in ["/echo%0d%0aX-Injected:%201", "/echo%0AHost:%20evil", "/echo%00"] {
                let before = server.requestCount
                let call = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", location)])
                await expectNetworkError(.invalidResponse) { try await client.send(call) }
                #expect(server.requestCount == before + 1)
            }
            await client.shutdown()
        }
    }
}
