import Foundation
import HTTPTypes

@testable import Courier
@testable import CourierCookies
@testable import CourierStreaming

/// The parsers of the wings: what a server sends to the cookie jar, an event stream, a JSON Lines
/// body and a resumed download, and what a configuration or the environment names as a proxy, a
/// no-proxy list or a Unix socket. Each checks the properties its caller relies on.
extension FuzzTarget {
    static let wings: [FuzzTarget] = [setCookie, eventStream, jsonLines, contentRange, proxy, unixURL]

    /// Lines of the input, at most `limit`.
    private static func lines(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int = 64) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).prefix(limit).map(String.init)
    }

    /// Chunk sizes from 1 to 64 picked by the first byte, so one input is read in many cuttings.
    private static func chunks(_ bytes: UnsafeBufferPointer<UInt8>) -> [ArraySlice<UInt8>] {
        guard let first = bytes.first else { return [] }
        let size = Int(first % 64) + 1
        let body = Array(bytes.dropFirst())
        return stride(from: 0, to: body.count, by: size).map { body[$0..<min($0 + size, body.count)] }
    }

    /// `Set-Cookie` fields (one per line after the first, whose first byte picks the request's URL)
    /// into a jar: no cookie for a public suffix, a Secure cookie only from https, a `Cookie` line
    /// under its cap and never a Secure cookie over http.
    static let setCookie = FuzzTarget(name: "set-cookie") { bytes in
        let urls = [
            ("https", "shop.example.co.uk", "/a/b"), ("http", "web.payments.svc.cluster.local", "/"), ("https", "10.0.0.1", "/x"),
            ("http", "evil.myshopify.com", "/"),
        ]
        let all = lines(bytes)
        let (scheme, host, path) = urls[Int(bytes.first ?? 0) % urls.count]
        let request = HTTPRequest(method: .get, scheme: scheme, authority: host, path: path)
        var head = HTTPResponse(status: .ok)
        for line in all.dropFirst() {
            head.headerFields.append(HTTPField(name: .setCookie, value: line))
        }
        let jar = CookieJar(clock: ManualTimeSource())
        jar.store(from: head, for: request)
        // Checked apart from the jar's own rules: a cookie's domain is the host or a name the
        // host is under, never a single label or one of these suffixes.
        let suffixes: Set<String> = ["co.uk", "uk", "svc.cluster.local", "payments.svc.cluster.local", "myshopify.com", "com", "local"]
        for cookie in jar.cookies {
            precondition(cookie.domain == host || host.hasSuffix("." + cookie.domain), "a cookie for another host")
            precondition(cookie.isHostOnly || (cookie.domain.contains(".") && !suffixes.contains(cookie.domain)), "a public suffix")
            precondition(cookie.isHostOnly || !PublicSuffixes.standard.isPublicSuffix(cookie.domain), "a cookie for a public suffix")
            precondition(!cookie.isSecure || scheme == "https", "a Secure cookie from http")
            precondition(cookie.name.utf8.count + cookie.value.utf8.count <= CookieJar.maxCookieBytes)
        }
        precondition(jar.cookies.count <= SetCookie.maxCookiesPerAnswer)
        let plain = HTTPRequest(method: .get, scheme: "http", authority: host, path: path)
        if let line = jar.header(for: plain) {
            precondition(line.utf8.count <= CookieJar.maxHeaderBytes)
            let sent = Set(line.components(separatedBy: "; ").map { String($0.prefix { $0 != "=" }) })
            for cookie in jar.cookies where cookie.isSecure && !jar.cookies.contains(where: { !$0.isSecure && $0.name == cookie.name }) {
                precondition(!sent.contains(cookie.name), "a Secure cookie sent over http")
            }
        }
        _ = jar.header(for: request)
    }

    /// An event stream in chunks: every event's data within the cap (as received).
    static let eventStream = FuzzTarget(name: "event-stream") { bytes in
        var parser = ServerSentEventParser(maxEventBytes: 512)
        for chunk in chunks(bytes) {
            guard let events = try? parser.feed(chunk) else { return }
            // The cap counts bytes received; each invalid UTF-8 byte becomes U+FFFD (3 bytes).
            for event in events { precondition(event.data.utf8.count <= 3 * 512, "an event past the cap") }
        }
    }

    /// A JSON Lines body in chunks: each line within the cap, without its LF, the line numbers rising.
    static let jsonLines = FuzzTarget(name: "json-lines") { bytes in
        var framer = LineFramer(maxLineBytes: 64)
        var last = 0
        var pieces = chunks(bytes)[...]
        while true {
            guard let step = try? framer.next() else { return }
            switch step {
            case .line(let line, let number):
                precondition(line.count <= 64 && !line.contains(UInt8(ascii: "\n")) && number > last, "a line past the cap")
                last = number
            case .finished:
                return
            case .needMore:
                if let piece = pieces.popFirst() { framer.append(Data(piece)) } else { framer.end() }
            }
        }
    }

    /// A `Content-Range` (first line) and an `ETag` (second) on a `206` after a `200` of 300 bytes
    /// with `"v1"` and 100 bytes written: continued only from byte 100, within the total, same tag.
    static let contentRange = FuzzTarget(name: "content-range") { bytes in
        let all = lines(bytes, limit: 2)
        let range = all.first ?? ""
        if let parts = DownloadRun.parts(ofRange: range) {
            precondition(parts.start >= 0 && parts.end >= 0 && (parts.total ?? 0) >= 0)
        }
        guard let sink = FileHandle(forWritingAtPath: "/dev/null") else { return }
        var download = DownloadRun(options: DownloadOptions(), file: sink)
        do {
            try download.take(HTTPResponse(status: .ok, headerFields: [.eTag: "\"v1\"", .contentLength: "300"]))
            try download.write(Data(repeating: 1, count: 100))
        } catch {
            preconditionFailure("the first answer failed: \(error)")
        }
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentRange, value: range))
        if all.count > 1 { fields.append(HTTPField(name: .eTag, value: all[1])) }
        guard (try? download.take(HTTPResponse(status: .partialContent, headerFields: fields))) != nil else { return }
        let parts = fields[.contentRange].flatMap(DownloadRun.parts(ofRange:))
        precondition(parts?.start == 100 && (parts?.total ?? 300) == 300 && fields[.eTag] == "\"v1\"", "spliced another version")
        _ = download.expectedSize(announcing: nil)
    }

    /// A proxy URL (first line), `no_proxy` entries (the next lines) and an environment (lines of
    /// `NAME=value`): read or refused with a typed error; an excluded host is never proxied.
    static let proxy = FuzzTarget(name: "proxy") { bytes in
        let all = lines(bytes, limit: 16)
        var environment: [String: String] = [:]
        for line in all where line.contains("=") {
            let pair = line.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { environment[String(pair[0])] = String(pair[1]) }
        }
        _ = try? ProxyConfiguration.environment(environment)
        guard let first = all.first, let configuration = try? ProxyConfiguration(server: first, noProxy: Array(all.dropFirst())) else {
            return
        }
        for host in ["localhost", "127.0.0.1", "[::1]", "api.example.com", "10.1.2.3"] {
            let request = HTTPRequest(method: .get, scheme: "https", authority: host, path: "/")
            if configuration.noProxy.contains(where: { $0.matches(host: host) }) {
                precondition(configuration.server(for: request) == nil, "an excluded host went through the proxy")
            }
        }
    }

    /// An `http+unix` base URL: a socket path and a `localhost` base, or `nil`.
    static let unixURL = FuzzTarget(name: "unix-url") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let (socket, base) = ConnectionOverrides.unixSocketBase(text) else { return }
        precondition(!socket.isEmpty && (base.hasPrefix("http://localhost") || base.hasPrefix("https://localhost")))
        var overrides = ConnectionOverrides.none
        overrides.unixSocket = socket
        _ = try? overrides.validate()
    }
}
