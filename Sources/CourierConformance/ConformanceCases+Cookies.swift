import Courier
import CourierCache
import CourierCookies
import CourierTestServer
import Foundation
import Testing

/// A client's cookie jar, the same on every transport: the transport's own cookie handling stays
/// off, and each hop, redirects included, gets the cookies its own URL matches (issue 42).
extension ConformanceCases {
    /// Cookies a response sets come back to the same origin, a cookie set by a redirect hop goes
    /// only where the jar's rules send it (not to the other origin the redirect leads to), a
    /// `Secure` cookie is kept only from https, and neither another client nor a client without a
    /// jar sends any. All of a request's cookies go in one `Cookie` line; two `Set-Cookie` fields
    /// of one answer are both kept. A cached answer sets no cookie: a client sharing the cache
    /// never gets another's. A transport that joins repeated header fields (URLSession) cannot
    /// hand over one cookie per field, so a client with a jar on it is refused at start.
    public static func cookieJar(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            if transport.repeatedResponseHeaders == .joined {
                let error = #expect(throws: ConfigurationError.self) { try transport.makeClient(server) { $0.keepsCookies = true } }
                #expect(error?.key == "cookies", "\(String(describing: error))")
                return
            }
            let client = try transport.makeClient(server) { $0.keepsCookies = true }
            let secure = server.mode.usesTLS
            _ = try await client.send(
                RawEndpoint(
                    path: "headers",
                    query: [
                        QueryItem("Set-Cookie", "session=abc; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT"),
                        QueryItem("Set-Cookie", "safe=1; Secure; HttpOnly"),
                    ]))
            let echo = try await client.send(EchoEndpoint())
            #expect(echo.header("cookie") == (secure ? "session=abc; safe=1" : "session=abc"), "\(echo.headers)")
            #expect(client.cookieJar?.cookies.count == (secure ? 2 : 1))

            // A redirect hop sets a cookie and leads to another origin: the cookie stays with its own.
            let other = secure ? "https://127.0.0.1:\(server.port)" : "http://localhost:\(server.port)"
            let hop = EchoEndpoint(
                path: "redirect-to", query: [QueryItem("url", other + "/echo"), QueryItem("setCookie", "hop=1; Path=/")])
            let elsewhere = try await client.send(hop)
            #expect(elsewhere.header("cookie") == nil, "the other origin got \(elsewhere.header("cookie") ?? "")")
            let home = try await client.send(EchoEndpoint())
            #expect(home.header("cookie")?.contains("hop=1") == true, "\(home.headers)")
            // A redirect back to the same origin carries the cookie its own hop set.
            let same = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", "/echo"), QueryItem("setCookie", "again=2; Path=/")])
            #expect(try await client.send(same).header("cookie")?.contains("again=2") == true)
            // The call's own Cookie goes first, the jar's after it.
            let own = try await client.send(EchoEndpoint(headers: ["Cookie": "mine=0"]))
            #expect(own.header("cookie")?.hasPrefix("mine=0; ") == true, "\(own.headers)")

            let stranger = try transport.makeClient(server) { $0.keepsCookies = true }
            #expect(try await stranger.send(EchoEndpoint()).header("cookie") == nil, "two clients shared a jar")
            let plain = try transport.makeClient(server)
            _ = try await plain.send(RawEndpoint(path: "headers", query: [QueryItem("Set-Cookie", "session=abc")]))
            #expect(try await plain.send(EchoEndpoint()).header("cookie") == nil, "a client without a jar kept a cookie")
            #expect(plain.cookieJar == nil)
            // Two clients sharing a cache: the second's hit sets no cookie in its jar.
            let shared = ResponseCache.memory()
            let first = try transport.makeClient(server) {
                $0.keepsCookies = true
                $0.cache = shared
            }
            let second = try transport.makeClient(server) {
                $0.keepsCookies = true
                $0.cache = shared
            }
            let cacheable = RawEndpoint(
                path: "headers", query: [QueryItem("Cache-Control", "max-age=600"), QueryItem("Set-Cookie", "owner=first")])
            _ = try await first.send(cacheable)
            let hit = try await second.response(for: cacheable)
            #expect(hit.metrics.cache == .hit)
            #expect(first.cookieJar?.cookies.map(\.name) == ["owner"] && second.cookieJar?.cookies.isEmpty == true)
            for done in [client, stranger, plain, first, second] { await done.shutdown() }
        }
    }

    /// One `Set-Cookie` field is one cookie: a comma in a value neither ends the cookie (losing
    /// the attributes after it: `auth=user=42,sig=X; Secure`) nor starts another
    /// (`pref=x, sid=attacker` sets no `sid`).
    public static func cookieFieldsStayWhole(_ transport: ConformanceTransport) async throws {
        guard transport.repeatedResponseHeaders != .joined else { return }  // refused at start (cookieJar)
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) { $0.keepsCookies = true }
            let secure = server.mode.usesTLS
            _ = try await client.send(
                RawEndpoint(
                    path: "headers",
                    query: [
                        QueryItem("Set-Cookie", "auth=user=42,sig=X; Secure; HttpOnly"),
                        QueryItem("Set-Cookie", "pref=x, sid=attacker; Path=/"),
                    ]))
            let cookies = client.cookieJar?.cookies ?? []
            #expect(!cookies.contains { $0.name == "sid" || $0.name == "sig" }, "\(cookies)")
            #expect(cookies.first { $0.name == "pref" }?.value == "x, sid=attacker", "\(cookies)")
            // Over http the Secure cookie is refused whole; over https it is kept whole, Secure.
            let auth = cookies.first { $0.name == "auth" }
            #expect(secure ? auth?.value == "user=42,sig=X" && auth?.isSecure == true : auth == nil, "\(cookies)")
            let echo = try await client.send(EchoEndpoint())
            let sent = echo.header("cookie")?.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            #expect(sent.contains("pref=x, sid=attacker") && !sent.contains { $0.hasPrefix("sid=") }, "\(echo.headers)")
            await client.shutdown()
        }
    }
}
