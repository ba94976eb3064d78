import Foundation

/// A URL split into the parts an HTTP request head needs.
public struct BuiltURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercase.
    public var scheme: String
    /// Host and optional port, for example `api.example.com:8443` or `[::1]:80`.
    public var authority: String
    /// The host alone (IPv6 literals keep their brackets).
    public var host: String
    /// The port, when the URL names one.
    public var port: Int?
    /// The encoded path and query, always starting with `/`, for example `/v1/users?page=2`.
    public var pathAndQuery: String

    /// The whole URL.
    public var description: String { "\(scheme)://\(authority)\(pathAndQuery)" }
}

/// Builds every request URL: joins the base URL and the path, percent-encodes path segments and
/// query items. This is the only place Courier composes URLs.
enum URLBuilder {
    /// Joins `baseURL`, `path` and `query` into a URL.
    ///
    /// - The base URL must be absolute `http` or `https`, without spaces, control characters,
    ///   user info or a fragment; its own path and query are kept as written (already encoded).
    /// - `path` is plain text whose `/` separate segments; each segment is percent-encoded,
    ///   keeping escapes that are already there. Leading and trailing slashes of the base path
    ///   and of `path` are joined with exactly one `/`.
    /// - Query items are appended after any query the base URL has.
    ///
    /// - Throws: ``NetworkError/Kind/invalidRequest`` naming what is wrong.
    static func build(baseURL: String, path: String, query: [QueryItem]) throws(NetworkError) -> BuiltURL {
        try build(base: parseBase(baseURL), path: path, query: query)
    }

    /// A base URL checked and split once, so that calls on the same base do not parse it again.
    struct Base: Sendable, Hashable {
        /// The text it was parsed from.
        var text: String
        var scheme: String
        var authority: String
        var host: String
        var port: Int?
        /// Encoded, as written.
        var path: String
        /// Encoded, as written; `nil` when the base URL has no `?`.
        var query: String?
    }

    /// Checks and splits a base URL; see ``build(baseURL:path:query:)`` for the rules.
    /// ``parseBase(_:)`` through a process-wide cache: API objects that name their own base URL
    /// (every `BaseAPI`) name the same few over and over, and parsing one costs microseconds.
    /// Only bases that parse are kept, at most ``baseCacheLimit`` of them.
    /// - Parameter baseURL: The base URL.
    /// - Returns: The parsed base.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` as ``parseBase(_:)`` does.
    static func cachedBase(_ baseURL: String) throws(NetworkError) -> Base {
        if let known = baseCache.withLock({ $0[baseURL] }) { return known }
        let parsed = try parseBase(baseURL)
        baseCache.withLock { cache in
            if cache.count >= baseCacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[baseURL] = parsed
        }
        return parsed
    }

    /// The most parsed bases ``cachedBase(_:)`` keeps; past it the cache starts again.
    static let baseCacheLimit = 256
    private static let baseCache = Locked<[String: Base]>([:])

    static func parseBase(_ baseURL: String) throws(NetworkError) -> Base {
        if let bad = baseURL.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw .invalidRequest("the base URL contains \(describe(bad)); spaces and control characters are not allowed in a URL")
        }
        guard let schemeEnd = baseURL.range(of: "://") else {
            throw .invalidRequest(
                "the base URL '\(Redaction.redactedURL(baseURL))' is not absolute; it must start with http:// or https://")
        }
        let scheme = baseURL[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .invalidRequest("the base URL's scheme '\(scheme)' is not supported; use http or https")
        }
        let rest = baseURL[schemeEnd.upperBound...]
        if rest.contains("#") {
            throw .invalidRequest("the base URL has a fragment (#); fragments are never sent and are not allowed")
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        let (host, port) = try parseAuthority(authority)

        let afterAuthority = rest[authorityEnd...]
        let pathQuery = afterAuthority.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let basePath = pathQuery.first.map { PercentEncoding.path($0) } ?? ""
        let baseQuery = pathQuery.count == 2 ? String(pathQuery[1]) : nil
        if let baseQuery, !PercentEncoding.isValidEncodedQueryValue(baseQuery, allowingSeparators: true) {
            throw .invalidRequest("the base URL's query '\(Redaction.redactedURL("?" + baseQuery))' is not validly percent-encoded")
        }
        return Base(
            text: baseURL, scheme: scheme, authority: port.map { "\(host):\($0)" } ?? host, host: host, port: port, path: basePath,
            query: baseQuery)
    }

    /// Joins a parsed base URL, `path` and `query` into a URL.
    static func build(base: Base, path: String, query: [QueryItem]) throws(NetworkError) -> BuiltURL {
        if let bad = path.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidRequest("the path contains \(describe(bad)); control characters are not allowed in a URL")
        }
        var fullPath = joinPaths(base.path, PercentEncoding.path(path))
        // A `.` or `..` segment (plain or encoded) is refused, not resolved: one library would
        // collapse it and another send it, so the server would see different paths by transport.
        if let problem = RequestTarget.pathProblem(fullPath), problem.contains("segment") {
            throw .invalidRequest(
                "the path '\(Redaction.redactedURL(fullPath).prefix(200))' has a '.' or '..' segment (plain or percent-encoded); these are refused on every transport, never resolved"
            )
        }
        var queryParts: [String] = []
        if let baseQuery = base.query, !baseQuery.isEmpty { queryParts.append(baseQuery) }
        for item in query {
            guard !item.name.isEmpty else { throw .invalidRequest("a query item has an empty name") }
            var part = PercentEncoding.queryComponent(item.name)
            if let value = item.value {
                if item.isValuePercentEncoded {
                    guard PercentEncoding.isValidEncodedQueryValue(value) else {
                        throw .invalidRequest("the pre-encoded value of query item '\(item.name)' is not validly percent-encoded")
                    }
                    part += "=" + value
                } else {
                    part += "=" + PercentEncoding.queryComponent(value)
                }
            }
            queryParts.append(part)
        }
        if !queryParts.isEmpty || base.query != nil {
            fullPath += "?" + queryParts.joined(separator: "&")
        }
        return BuiltURL(scheme: base.scheme, authority: base.authority, host: base.host, port: base.port, pathAndQuery: fullPath)
    }

    /// Joins a base path and a relative path with exactly one `/` between them.
    private static func joinPaths(_ base: String, _ relative: String) -> String {
        let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
        let trimmedRelative = relative.hasPrefix("/") ? String(relative.dropFirst()) : relative
        if trimmedRelative.isEmpty {
            return base.isEmpty ? "/" : base
        }
        return trimmedBase + "/" + trimmedRelative
    }

    private static func parseAuthority(_ authority: String) throws(NetworkError) -> (host: String, port: Int?) {
        guard !authority.isEmpty else { throw .invalidRequest("the base URL has no host") }
        if authority.contains("@") {
            throw .invalidRequest("the base URL contains user info (user:password@); send credentials in a header instead")
        }
        var host = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw .invalidRequest("the base URL's IPv6 host is missing its closing ]")
            }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidRequest("unexpected characters after the IPv6 host in the base URL") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw .invalidRequest("the base URL has no host") }
        let canonical: String
        switch RequestTarget.canonicalHost(host) {
        case .success(let value): canonical = value
        case .failure(let problem):
            throw .invalidRequest(
                "the base URL's host '\(host.debugDescription.dropFirst().dropLast())' is not a host name or IP literal: \(problem.reason)")
        }
        var port: Int?
        if let portText {
            guard portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int(portText),
                (1...65_535).contains(value)
            else {
                throw .invalidRequest("the base URL's port '\(portText)' is not a number from 1 to 65535")
            }
            port = value
        }
        return (canonical, port)
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        scalar == " " ? "a space" : "the control character U+\(String(scalar.value, radix: 16, uppercase: true))"
    }
}
