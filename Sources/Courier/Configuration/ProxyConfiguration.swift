import Foundation
import HTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// Which forward proxy a client's calls go through, decided once per hop and read by every
/// transport.
///
/// The default is ``none``: every call connects to its server directly, on every transport,
/// whatever `http_proxy` or `HTTPS_PROXY` say. Environment proxies are used only when asked for
/// (``environment(_:)``, or `proxy: "environment"` in a configuration), and then Courier reads
/// the variables itself, so every transport sends a call the same way.
///
/// ```swift
/// var configuration = ClientConfiguration(baseURL: "https://api.example.com")
/// configuration.proxy = try ProxyConfiguration(server: "http://user:secret@proxy.internal:3128",
///                                             noProxy: ["internal", "10.0.0.0/8"])
/// ```
///
/// A call to an `https` server goes through a `CONNECT` tunnel: the proxy sees the host and port,
/// never the request. A call to an `http` server is forwarded by the proxy (curl) or tunnelled
/// (AsyncHTTPClient, which only tunnels). A proxy that refuses a tunnel, or asks for credentials it
/// did not get (`407`, also to a forwarded call), fails the call as
/// ``NetworkError/Kind/proxyFailure``. Any other answer of a proxy to a forwarded call (a `403`,
/// a `502`) cannot be told from the server's, and comes back as the response.
public struct ProxyConfiguration: Sendable, Hashable {
    /// The proxy for `http` servers; `nil` connects directly.
    public var httpProxy: ProxyServer?
    /// The proxy for `https` servers; `nil` connects directly.
    public var httpsProxy: ProxyServer?
    /// The servers reached directly even when a proxy is set.
    public var noProxy: [ProxyExclusion]

    /// No proxy: every call connects directly.
    public static let none = ProxyConfiguration(http: nil, https: nil)

    /// A proxy per scheme.
    /// - Parameters:
    ///   - http: The proxy for `http` servers, or `nil`.
    ///   - https: The proxy for `https` servers, or `nil`.
    ///   - noProxy: The servers reached directly.
    public init(http: ProxyServer?, https: ProxyServer?, noProxy: [ProxyExclusion] = []) {
        httpProxy = http
        httpsProxy = https
        self.noProxy = noProxy
    }

    /// One proxy for every scheme.
    /// - Parameters:
    ///   - server: The proxy's URL, `http://[user:password@]host[:port]`.
    ///   - noProxy: The servers reached directly, in the forms ``ProxyExclusion`` reads.
    /// - Throws: ``ConfigurationError`` naming `proxy` or `noProxy`.
    public init(server: String, noProxy: [String] = []) throws(ConfigurationError) {
        let proxy = try ProxyServer(url: server)
        self.init(http: proxy, https: proxy, noProxy: try ProxyExclusion.list(noProxy, source: "code"))
    }

    /// The proxies the process environment names, read the way libcurl reads them: `http_proxy`
    /// (lowercase only: `HTTP_PROXY` can be set by a CGI request's `Proxy` header) for `http`,
    /// `https_proxy` or `HTTPS_PROXY` for `https`, `all_proxy` or `ALL_PROXY` for either when its
    /// own is unset, and `no_proxy` or `NO_PROXY` for the exclusions. A value without a scheme is
    /// an `http://` proxy; an empty one is unset.
    /// - Parameter environment: The environment; the process's by default.
    /// - Returns: The proxies, ``none`` when no variable is set.
    /// - Throws: ``ConfigurationError`` naming the variable whose value Courier cannot use (a
    ///   proxy that is not `http://`, or an exclusion it cannot read).
    public static func environment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> ProxyConfiguration {
        func first(_ names: [String]) -> (name: String, value: String)? {
            for name in names {
                if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return (name, value) }
            }
            return nil
        }
        func server(_ names: [String]) throws(ConfigurationError) -> ProxyServer? {
            guard let (name, value) = first(names + ["all_proxy", "ALL_PROXY"]) else { return nil }
            let url = value.contains("://") ? value : "http://" + value
            do {
                return try ProxyServer(url: url, source: "environment")
            } catch {
                var failure = error
                failure.variable = name
                throw failure
            }
        }
        let http = try server(["http_proxy"])
        let https = try server(["https_proxy", "HTTPS_PROXY"])
        // Without a proxy the exclusions mean nothing, and are not read (so an entry Courier cannot
        // read stops nobody who uses no proxy).
        guard http != nil || https != nil, let (name, value) = first(["no_proxy", "NO_PROXY"]) else {
            return ProxyConfiguration(http: http, https: https)
        }
        do {
            let list = try ProxyExclusion.list(value.split(separator: ",").map(String.init), source: "environment")
            return ProxyConfiguration(http: http, https: https, noProxy: list)
        } catch {
            var failure = error
            failure.variable = name
            throw failure
        }
    }

    /// Whether no call goes through a proxy.
    public var isNone: Bool { httpProxy == nil && httpsProxy == nil }

    /// The proxy a request goes through, or `nil` when it connects directly: the one fact every
    /// transport reads.
    /// - Parameter request: The request of one hop, its target already checked.
    /// - Returns: The proxy.
    public func server(for request: HTTPRequest) -> ProxyServer? {
        let https = request.scheme?.lowercased() == "https"
        guard let proxy = https ? httpsProxy : httpProxy else { return nil }
        let host = Origin.hostAndPort(of: request.authority ?? "").host
        return noProxy.contains { $0.matches(host: host) } ? nil : proxy
    }
}

/// A forward HTTP proxy: where it listens, and the credentials it asks for.
///
/// Its description never shows the password.
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The proxy's host, in canonical form (lowercase, IPv6 in brackets).
    public let host: String
    /// The proxy's port; 80 when its URL names none.
    public let port: Int
    /// The user name sent to the proxy (`Proxy-Authorization: Basic`), percent-decoded.
    public let username: String?
    /// The password sent to the proxy, percent-decoded.
    public let password: String?

    /// Reads a proxy URL.
    /// - Parameters:
    ///   - url: `http://[user[:password]@]host[:port]`, optionally with a `/` path, which is ignored.
    ///   - key: The configuration key or variable it came from, for errors; `proxy` by default.
    ///   - source: Where it came from, for errors.
    /// - Throws: ``ConfigurationError`` naming `key`; its value never shows the password.
    public init(url: String, key: String = "proxy", source: String = "code") throws(ConfigurationError) {
        // Whatever precedes the last `@` may hold the password, whatever the URL's shape.
        let shown = url.lastIndex(of: "@").map { "\(Redaction.placeholder)@" + url[url.index(after: $0)...] } ?? url
        func refuse(_ allowed: String) -> ConfigurationError {
            ConfigurationError(key: key, value: shown, allowed: allowed, source: source)
        }
        let shape = "http://[user:password@]host[:port]"
        guard let schemeEnd = url.range(of: "://") else { throw refuse(shape) }
        guard url[..<schemeEnd.lowerBound].lowercased() == "http" else {
            throw refuse("an http:// proxy (\(shape)); https and SOCKS proxies are not supported")
        }
        var authority = url[schemeEnd.upperBound...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard authority[end...].allSatisfy({ $0 == "/" }) else { throw refuse(shape + ", without a path or query") }
            authority = authority[..<end]
        }
        var username: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            let info = authority[..<at]
            let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            // Basic credentials: a user name without `:` (RFC 7617), and neither part with a
            // control character (a NUL would cut the text libcurl is given; CR/LF would reach logs).
            func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7F }
            guard let user = parts[0].removingPercentEncoding, !user.isEmpty, !user.contains(":"),
                let secret = (parts.count > 1 ? String(parts[1]) : "").removingPercentEncoding,
                !user.unicodeScalars.contains(where: isControl), !secret.unicodeScalars.contains(where: isControl)
            else { throw refuse(shape + ", with a percent-encoded user name (no ':') and password, without control characters") }
            username = user
            password = secret
            authority = authority[authority.index(after: at)...]
        }
        let text = String(authority)
        var hostEnd = text.firstIndex(of: ":") ?? text.endIndex
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw refuse(shape + ", with a valid host") }
            hostEnd = text.index(after: close)
        }
        guard case .success(let host) = RequestTarget.canonicalHost(text[..<hostEnd]) else { throw refuse(shape + ", with a valid host") }
        var chosen = 80
        let rest = text[hostEnd...]
        if !rest.isEmpty {
            let digits = rest.dropFirst()
            guard rest.hasPrefix(":"), !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.count <= 5,
                let number = Int(digits), (1...65_535).contains(number)
            else { throw refuse(shape + ", with a port from 1 to 65535") }
            chosen = number
        }
        self.host = host
        self.port = chosen
        self.username = username
        self.password = password
    }

    /// `http://host:port`, without credentials: what a transport connects to.
    public var url: String { "http://\(host):\(port)" }

    /// The URL, with `user:<redacted>@` when there are credentials.
    public var description: String {
        username == nil ? url : "http://\(username ?? ""):\(Redaction.placeholder)@\(host):\(port)"
    }

    public var debugDescription: String { description }

    /// One child, the redacted ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

/// A server reached directly although a proxy is set: one entry of a no-proxy list.
///
/// The forms are the usual ones (`no_proxy`): `*` for every server; a domain (`example.com`,
/// `.example.com` or `*.example.com`), which matches the domain and every name under it; an IP address (`10.1.2.3`,
/// `::1` or `[::1]`), which matches that address written as the host; and an IP network in CIDR
/// form (`10.0.0.0/8`, `fd00::/8`), which matches addresses in it. Names are never resolved to
/// addresses to match a network. Ports are not part of an entry.
public struct ProxyExclusion: Sendable, Hashable, CustomStringConvertible {
    private enum Rule: Hashable {
        case everything
        case domain(String)
        case network([UInt8], prefix: Int)
    }

    private let rule: Rule
    /// The entry as written.
    public let description: String

    /// Reads one entry.
    /// - Parameter text: The entry.
    /// - Throws: ``ConfigurationError`` naming `noProxy`.
    public init(_ text: String) throws(ConfigurationError) {
        try self.init(text, key: ConfigurationKey.proxyNoProxy.name, source: "code")
    }

    init(_ text: String, key: String, source: String) throws(ConfigurationError) {
        let entry = text.trimmingCharacters(in: .whitespaces)
        description = entry
        func refuse() -> ConfigurationError {
            ConfigurationError(
                key: key, value: text, allowed: "*, a domain (.example.com), an IP address or a CIDR network (10.0.0.0/8)",
                source: source)
        }
        if entry == "*" {
            rule = .everything
            return
        }
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        var address = String(parts[0])
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if let bytes = Self.addressBytes(address) {
            let prefix = parts.count > 1 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...(bytes.count * 8)).contains(prefix) else { throw refuse() }
            rule = .network(bytes, prefix: prefix)
            return
        }
        var name = Substring(entry)
        if name.hasPrefix("*.") { name = name.dropFirst() }
        while name.hasPrefix(".") { name = name.dropFirst() }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard parts.count == 1, !name.isEmpty, case .success(let host) = RequestTarget.canonicalHost(name), !host.hasPrefix("[") else {
            throw refuse()
        }
        rule = .domain(host)
    }

    /// Reads a list, skipping empty entries.
    static func list(_ entries: [String], key: String = ConfigurationKey.proxyNoProxy.name, source: String) throws(ConfigurationError)
        -> [ProxyExclusion]
    {
        var list: [ProxyExclusion] = []
        for entry in entries where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
            list.append(try ProxyExclusion(entry, key: key, source: source))
        }
        return list
    }

    /// Whether a host (in the canonical form a checked request carries) is reached directly.
    /// - Parameter host: The host.
    /// - Returns: Whether this entry matches it.
    public func matches(host: String) -> Bool {
        switch rule {
        case .everything:
            return true
        case .domain(let domain):
            var name = Substring(host)
            if name.hasSuffix(".") { name = name.dropLast() }
            return name == domain || name.hasSuffix("." + domain)
        case .network(let network, let prefix):
            var literal = host
            if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
            guard let bytes = Self.addressBytes(literal), bytes.count == network.count else { return false }
            var remaining = prefix
            for (a, b) in zip(bytes, network) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    /// The bytes of an IPv4 (dotted decimal) or IPv6 address, or `nil`.
    private static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
