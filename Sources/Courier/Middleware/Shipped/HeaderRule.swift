import HTTPTypes

/// Headers added to the calls a rule matches: by team (the API object's `team`), host and path
/// prefix. ``TeamHeadersMiddleware`` applies them.
///
/// Precedence, from strongest to weakest (one order, pinned by a test):
/// 1. the API object's own headers: a rule never replaces them;
/// 2. the rule that matches most specifically: a team counts 4, a host 2, a path prefix 1, so
///    `team + host + path` beats `team + host` beats `team` beats `host + path` … beats a rule
///    with no condition; between equally specific rules, the later one in the list wins;
/// 3. the configuration's default headers (``ClientConfiguration/defaultHeaders``).
///
/// A rule without a team is client-wide. A rule's header replaces every value of the same name
/// set by a weaker source.
///
/// ```swift
/// let rule = try HeaderRule(team: "payments", headers: ["X-Team": .fixed("payments"), "X-Request-ID": .requestID])
/// ```
public struct HeaderRule: Sendable {
    /// Where a header's value comes from.
    public enum Value: Sendable {
        /// The same text on every call.
        case fixed(String)
        /// The call's request id (``RequestContext/requestID``).
        case requestID
        /// Computed per call; `nil` adds nothing. A value with control characters fails the call
        /// with ``NetworkError/Kind/invalidRequest`` before any I/O.
        case computed(@Sendable (HTTPRequest, RequestContext) -> String?)
    }

    /// The team the rule applies to; `nil` for every team and calls without one.
    public let team: String?
    /// The host (lowercase, without port) the rule applies to; `nil` for every host.
    public let host: String?
    /// The path prefix the rule applies to, matched on whole segments (`/v1` matches `/v1/users`,
    /// not `/v1beta`); `nil` for every path.
    public let pathPrefix: String?
    /// The headers, in the order given.
    public let headers: [(name: HTTPField.Name, value: Value)]
    /// Whether the values are secrets: redacted in logs and errors, never sent to another origin
    /// on a redirect.
    public let isSecret: Bool

    /// Creates a rule.
    /// - Parameters:
    ///   - team: The team; `nil` for a client-wide rule.
    ///   - host: The host, without port; `nil` for every host.
    ///   - pathPrefix: A path prefix starting with `/`; `nil` for every path.
    ///   - headers: Header names and where their values come from.
    ///   - secret: Whether the values are secrets.
    /// - Throws: ``ConfigurationError`` (key `headerRules`) for an invalid header name, a fixed
    ///   value with control characters, an empty team or host, or a path prefix without a leading `/`.
    public init(
        team: String? = nil, host: String? = nil, pathPrefix: String? = nil, headers: KeyValuePairs<String, Value>, secret: Bool = false
    ) throws(ConfigurationError) {
        try self.init(team: team, host: host, pathPrefix: pathPrefix, headerList: headers.map { ($0.key, $0.value) }, secret: secret)
    }

    /// Creates a rule from a list of headers (for rules read from a file).
    /// - Parameters: See ``init(team:host:pathPrefix:headers:secret:)``.
    /// - Throws: ``ConfigurationError`` as that initializer does.
    public init(team: String?, host: String?, pathPrefix: String?, headerList: [(String, Value)], secret: Bool) throws(ConfigurationError) {
        func invalid(_ what: String, _ value: String?) -> ConfigurationError {
            ConfigurationError(key: ConfigurationKey.headerRules.name, value: value, allowed: what, source: "code")
        }
        if let team, team.isEmpty { throw invalid("a non-empty team name", team) }
        // The one host rule (`RequestTarget`): the rule's host is compared with request hosts it wrote.
        var canonicalHost: String?
        if let host {
            guard case .success(let checked) = RequestTarget.canonicalHost(host) else {
                throw invalid("a host name or IP literal without scheme, port or path", host)
            }
            canonicalHost = checked
        }
        if let pathPrefix, !pathPrefix.hasPrefix("/") { throw invalid("a path prefix starting with /", pathPrefix) }
        var checked: [(name: HTTPField.Name, value: Value)] = []
        for (name, value) in headerList {
            guard let fieldName = HTTPField.Name(name) else { throw invalid("a valid header name", name) }
            if HeaderValidation.isFraming(fieldName) {
                throw invalid("a header the client does not own (it computes \(name) from the body, the URL or the proxy)", name)
            }
            if case .fixed(let text) = value, !HTTPField.isValidValue(text) {
                throw invalid("a header value without control characters (header \(name))", nil)
            }
            checked.append((fieldName, value))
        }
        self.team = team
        self.host = canonicalHost
        self.pathPrefix = pathPrefix
        self.headers = checked
        self.isSecret = secret
    }

    /// How specific the rule is: team 4, host 2, path prefix 1.
    var specificity: Int { (team != nil ? 4 : 0) + (host != nil ? 2 : 0) + (pathPrefix != nil ? 1 : 0) }

    /// Whether the rule applies to a request of a team.
    /// - Parameters:
    ///   - request: The request.
    ///   - callTeam: The call's team.
    ///   - path: The request's path without its query (computed once per request by the caller).
    func matches(_ request: HTTPRequest, team callTeam: String?, path: Substring) -> Bool {
        if let team, team != callTeam { return false }
        if let host {
            guard let authority = request.authority, Origin.hostAndPort(of: authority).host == host else { return false }
        }
        if let pathPrefix {
            guard path.hasPrefix(pathPrefix) else { return false }
            if !pathPrefix.hasSuffix("/"), path.count > pathPrefix.count {
                guard path[path.index(path.startIndex, offsetBy: pathPrefix.count)] == "/" else { return false }
            }
        }
        return true
    }
}
