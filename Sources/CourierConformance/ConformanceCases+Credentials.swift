import Courier
import CourierCache
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// Credentials stay with their origin and their caller, and framing belongs to the client: the
/// same on every transport (issue 38).
extension ConformanceCases {
    /// Every header that belongs to the client (framing, and the proxy hop's), as a caller might write it.
    public static let framingHeaders: [(name: String, value: String)] = [
        ("Content-Length", "5"), ("Transfer-Encoding", "chunked"), ("Host", "evil.test"), ("Connection", "close"), ("TE", "trailers"),
        ("Upgrade", "h2c"), ("Keep-Alive", "timeout=5"), ("content-LENGTH", "5"),
        // The proxy hop's: a caller's would reach the origin inside a tunnel.
        ("Proxy-Authorization", "Basic dXNlcjpzZWNyZXQ="), ("proxy-connection", "keep-alive"),
    ]

    /// A framing header from the API object, from a middleware, or from a network middleware is
    /// refused as `invalid_request` naming it, and nothing is sent.
    public static func framingHeadersRefused(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for (name, value) in framingHeaders {
                let error = await expectNetworkError(.invalidRequest) {
                    try await client.send(EchoEndpoint(method: .post, headers: [name: value], body: .text("hello")))
                }
                #expect(error?.message.lowercased().contains("'\(name.lowercased())'") == true, "\(error?.message ?? "no error")")
            }
            var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport.name)
            ConformanceTransport.reach(server.mode, with: &configuration)
            let adding = SettingHeader(name: HTTPField.Name("Transfer-Encoding")!, value: "chunked")
            for (application, network) in [([adding], []), ([], [adding])] as [([any Middleware], [any Middleware])] {
                let sneaky = try NetworkClient(
                    configuration: configuration, transport: transport.make(configuration), middleware: application,
                    networkMiddleware: network)
                let error = await expectNetworkError(.invalidRequest) { try await sneaky.send(EchoEndpoint()) }
                #expect(error?.message.contains("Transfer-Encoding") == true, "\(error?.message ?? "no error")")
                await sneaky.shutdown()
            }
            #expect(server.requestCount == 0, "a request with a framing header reached the server")
            await client.shutdown()
        }
    }

    /// Locations whose host decodes to something that is not a host: each would let the origin check
    /// see one host while a parser connects to another.
    public static func hostileLocations(scheme: String = "http", port: Int) -> [String] {
        let encoded = ["%2F%40", "%5C%40", "%40", "%23%40", "%3F%40", "%2F", "%3A", "%25", "%20"].map {
            "\(scheme)://127.0.0.2\($0)127.0.0.1:\(port)/echo"
        }
        return encoded + [
            "\(scheme)://127.0.0.1%3A\(port)/echo", "\(scheme)://\u{E9}xample.test:\(port)/echo",
            "\(scheme)://%C3%A9xample.test:\(port)/echo", "\(scheme)://[::1%25lo]:\(port)/echo",
        ]
    }

    /// A redirect to a host that is not a plain name or IP literal once decoded fails as
    /// `invalid_response`, and nothing but the redirecting request reaches a server; user info in a
    /// `Location` is never carried into the next request.
    public static func redirectHostileHost(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let headers: RequestHeaders = ["Authorization": "Bearer s3cret", "Cookie": "session=abc", "X-Api-Key": "k3y"]
            for location in hostileLocations(scheme: transport.serverMode.usesTLS ? "https" : "http", port: server.port) {
                let before = server.requestCount
                let call = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", location)], headers: headers)
                let error = await expectNetworkError(.invalidResponse) { try await client.send(call) }
                #expect(error?.message.contains("host") == true, "\(location): \(error?.message ?? "no error")")
                #expect(server.requestCount == before + 1, "\(location) was followed")
            }
            // User info is dropped: no transport turns it into a Basic credential.
            let scheme = transport.serverMode.usesTLS ? "https" : "http"
            let host = transport.serverMode.usesTLS ? "localhost" : "127.0.0.1"
            let withUser = "\(scheme)://user:pass@\(host):\(server.port)/echo"
            let echo = try await client.send(EchoEndpoint(path: "redirect-to", query: [QueryItem("url", withUser)]))
            #expect(echo.path == "/echo")
            #expect(echo.header("authorization") == nil, "the Location's user info became a credential")
            await client.shutdown()
        }
    }

    /// The methods a redirect changes, and the body it keeps: 303 makes every method but `HEAD` a
    /// `GET`, 301 and 302 only `POST`; every other method keeps its method and its body. A body
    /// that cannot be read twice fails as `redirect_refused`, saying why.
    public static func redirectKeepsMeaning(_ transport: ConformanceTransport, status: Int) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
                let endpoint = EchoEndpoint(
                    path: "redirect-to", method: method, query: [QueryItem("url", "/echo"), QueryItem("status", "\(status)")],
                    body: .text("form"))
                let becomesGet = status == 303 || ((status == 301 || status == 302) && method == .post)
                let echo = try await client.send(endpoint)
                #expect(echo.method == (becomesGet ? "GET" : method.rawValue), "\(method) on \(status)")
                #expect(echo.body == (becomesGet ? "" : "form"), "\(method) on \(status)")
                #expect((echo.header("content-type") != nil) == !becomesGet, "\(method) on \(status)")
            }
            if status != 303 {
                let oneShot = RequestBody.stream(PatternBody.Chunks(byteCount: 10), length: 10)
                let put = EchoEndpoint(
                    path: "redirect-to", method: .put, query: [QueryItem("url", "/echo"), QueryItem("status", "\(status)")],
                    body: oneShot)
                let error = await expectNetworkError(.redirectRefused) { try await client.send(put) }
                #expect(error?.message.contains("cannot be read twice") == true, "\(error?.message ?? "no error")")
            }
            await client.shutdown()
        }
    }

    /// The credential headers the cache and de-duplication cases try: a cookie, an API key, and a
    /// header the configuration names as secret.
    public static let scopedCredentials = ["Cookie", "X-Api-Key", "X-Tenant-Secret"]

    /// A response cached for one caller's credentials is never served to another's (a `private`
    /// answer, with a cookie, an API key or a configured secret header); the same caller gets it
    /// from the cache; a `private` answer to a call without credentials is not stored.
    public static func cacheKeepsCallersApart(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) { configuration in
                configuration.cache = .memory()
                configuration.secretHeaderNames = ["X-Tenant-Secret"]
            }
            for name in scopedCredentials {
                let path = "cacheable/me-\(name.lowercased())"
                let query = [QueryItem("cc", "private, max-age=600")]
                func call(_ credential: String?, version: Int) async throws -> (String, RequestMetrics.CacheResult?) {
                    var headers: RequestHeaders = ["X-Version": "\(version)"]
                    if let credential { headers.add(name, credential) }
                    let response = try await client.response(for: RawEndpoint(path: path, query: query, headers: headers))
                    return (String(decoding: response.value, as: UTF8.self), response.metrics.cache)
                }
                let suffix = name.lowercased()
                #expect(try await call("alice", version: 1).0 == "me-\(suffix) v1")
                let bob = try await call("bob", version: 2)
                #expect(bob.0 == "me-\(suffix) v2", "\(name): another caller got the first caller's answer")
                let again = try await call("alice", version: 3)
                #expect(again.0 == "me-\(suffix) v1", "\(name): the same caller's answer was not kept")
                #expect(again.1 == .hit)
                #expect(try await call(nil, version: 4).0 == "me-\(suffix) v4")
                #expect(try await call(nil, version: 5).0 == "me-\(suffix) v5", "\(name): a private answer was stored for nobody")
            }
            await client.shutdown()
        }
    }

    /// The shipped auth middleware, as application or as network middleware, adds its credential
    /// to no hop that left the call's origin, and refreshes on no 401 from another origin.
    public static func authStaysWithOrigin(_ transport: ConformanceTransport) async throws {
        try await withServer { first in
            try await withServer { second in
                var configuration = ClientConfiguration(baseURL: first.baseURL, transport: transport.name)
                ConformanceTransport.reach(first.mode, with: &configuration)
                for asNetwork in [false, true] {
                    let provider = CountingCredentials()
                    let auth = AuthRefreshMiddleware(provider: provider)
                    let client = try NetworkClient(
                        configuration: configuration, transport: transport.make(configuration), middleware: asNetwork ? [] : [auth],
                        networkMiddleware: asNetwork ? [auth] : [])
                    let away = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", "\(second.baseURL)/echo")])
                    let echo = try await client.send(away)
                    #expect(echo.header("authorization") == nil, "network: \(asNetwork): the credential followed the redirect")
                    let refused = RawEndpoint(path: "redirect-to", query: [QueryItem("url", "\(second.baseURL)/status/401")])
                    let error = await expectNetworkError(.httpStatus) { try await client.send(refused) }
                    #expect(error?.status == 401)
                    #expect(provider.refreshes == 0, "network: \(asNetwork): a 401 from another origin refreshed the credential")
                    let home = try await client.send(EchoEndpoint())
                    #expect(home.header("authorization") == "Bearer t0", "network: \(asNetwork)")
                    await client.shutdown()
                }
            }
        }
    }

    /// The `WWW-Authenticate` lines the challenge case answers with: Basic, Digest, Bearer, and
    /// Basic among others on one line or two.
    public static let challenges: [[String]] = [
        [#"Basic realm="x""#], [#"Digest realm="x", nonce="abc", qop="auth""#], [#"Bearer error="invalid_token""#],
        [#"Digest realm="x", nonce="abc", Basic realm="x""#], [#"Digest realm="x", nonce="abc""#, #"Basic realm="x""#],
        ["basic realm=x"],
    ]

    /// A 401 with an authentication challenge reaches the caller at once, with its body, whatever
    /// the scheme: no transport answers it, waits for an answer, or sends the request again.
    public static func authenticationChallenge(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            // A stalled challenge would end at the deadline as `timed_out`, not as the 401.
            let client = try transport.makeClient(server) { $0.requestTimeout = .seconds(60) }
            for challenge in challenges {
                let before = server.requestCount
                let endpoint = RawEndpoint(path: "challenge", query: challenge.map { QueryItem("www", $0) })
                let error = await expectNetworkError(.httpStatus) { try await client.send(endpoint) }
                #expect(error?.status == 401, "\(challenge)")
                #expect(error?.responseBody == Data(#"{"status":401}"#.utf8), "\(challenge)")
                #expect(server.requestCount == before + 1, "\(challenge): the transport answered the challenge itself")
            }
            // The client still works.
            #expect(try await client.send(EchoEndpoint()).path == "/echo")
            await client.shutdown()
        }
    }

    /// A server that speaks only TLS 1.0 and 1.1 is refused in the handshake, as `tls_failure`,
    /// and no request reaches it. (URLSession cannot trust the test CA, and has no TLS floor of its
    /// own: it negotiates TLS 1.1 and fails on the certificate. For it the case shows only that
    /// the certificate failure is `tls_failure` on libcurl 7 and 8, and that nothing is sent.)
    public static func tlsBelow12Refused(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: .legacyTLS) { server in
            let client = try transport.makeClient(baseURL: server.baseURL) { configuration in
                if transport.privateCA == .trusted { configuration.tls.caPEM = TestCertificates.caPEM }
            }
            await expectNetworkError(.tlsFailure) { try await client.send(EchoEndpoint()) }
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    /// A file body sends exactly the size it announced when it was made: a file that grew or
    /// shrank before it was sent fails the call as `invalid_request`, and the server never gets a
    /// complete request of the wrong size.
    public static func fileBodyChanged(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for change in [64, -64] {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-file-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                let original = Data(repeating: 0x61, count: 200_000)
                try original.write(to: file)
                let body = RequestBody.file(file)
                try (change > 0 ? original + Data(repeating: 0x62, count: change) : original.prefix(original.count + change)).write(
                    to: file)
                let error = await expectNetworkError(.invalidRequest) {
                    try await client.send(DigestEndpoint(body: body))
                }
                #expect(error?.message.contains("changed while it was sent") == true, "\(change): \(error?.message ?? "no error")")
            }
            // Unchanged, it goes whole.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-file-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(repeating: 0x61, count: 200_000).write(to: file)
            #expect(try await client.send(DigestEndpoint(body: .file(file))).bodyLength == 200_000)
            await client.shutdown()
        }
    }

    /// A caller's `.` and `..` segments, plain or percent-encoded, are refused before anything is
    /// sent; a server's are resolved by the redirect rule, encoded ones too, so every transport
    /// sends the same path.
    public static func dotSegments(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            for path in ["a/../echo", "a/%2e%2e/echo", "a/.%2E/echo", "./echo", "echo/."] {
                let error = await expectNetworkError(.invalidRequest) { try await client.send(EchoEndpoint(path: path)) }
                #expect(error?.message.contains("segment") == true, "\(path): \(error?.message ?? "no error")")
            }
            #expect(server.requestCount == 0, "a path with a dot segment reached the server")
            for location in ["/x/../echo", "/x/%2e%2e/echo", "/x/%2E./y/%2e%2E/echo", "/./echo"] {
                let echo = try await client.send(EchoEndpoint(path: "redirect-to", query: [QueryItem("url", location)]))
                #expect(echo.path == "/echo", "\(location) arrived as \(echo.path)")
            }
            #expect(try await client.send(EchoEndpoint(path: "echo/a..b/.../.well-known")).path == "/echo/a..b/.../.well-known")
            await client.shutdown()
        }
    }

    /// With network middleware below the cache (which may add credentials the key cannot see), only
    /// `public` answers are stored, and calls are not de-duplicated automatically.
    public static func cacheBelowNetworkMiddleware(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport.name)
            ConformanceTransport.reach(server.mode, with: &configuration)
            configuration.cache = .memory()
            let signing = SettingHeader(name: HTTPField.Name("X-Api-Key")!, value: "alice")
            let client = try NetworkClient(
                configuration: configuration, transport: transport.make(configuration), networkMiddleware: [signing])
            func body(_ control: String, version: Int) async throws -> String {
                let call = RawEndpoint(path: "cacheable/below", query: [QueryItem("cc", control)], headers: ["X-Version": "\(version)"])
                return String(decoding: try await client.send(call), as: UTF8.self)
            }
            #expect(try await body("max-age=600", version: 1) == "below v1")
            #expect(
                try await body("max-age=600", version: 2) == "below v2", "an answer to a signed request was stored under the unsigned key")
            #expect(try await body("public, max-age=600", version: 3) == "below v3")
            #expect(try await body("public, max-age=600", version: 4) == "below v3", "a public answer may be reused")
            await client.shutdown()
        }
    }
}

/// A middleware that sets one header on every request it passes.
struct SettingHeader: Middleware {
    var name: HTTPField.Name
    var value: String

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        var request = request
        request.headerFields[name] = value
        return try await next(request, body, context)
    }
}

/// A credential provider that counts its refreshes.
final class CountingCredentials: CredentialProvider, Sendable {
    private let count = Mutex(0)
    var refreshes: Int { count.withLock { $0 } }
    func credential() async throws -> String { "Bearer t0" }
    func refresh(rejected: String) async throws -> String {
        count.withLock { $0 += 1 }
        return "Bearer t1"
    }
}
