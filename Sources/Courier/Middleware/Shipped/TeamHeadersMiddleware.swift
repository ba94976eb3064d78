import HTTPTypes

/// Adds the headers of every matching ``HeaderRule`` to each call, in the precedence
/// ``HeaderRule`` documents (the API object's own headers always win).
///
/// The client installs it first in the chain when ``ClientConfiguration/headerRules`` is not
/// empty; rules can also come from the configuration file (`headerRules`). Values of rules marked
/// secret join the call's secret header names, so they are redacted and never follow a redirect
/// to another origin.
public struct TeamHeadersMiddleware: Middleware {
    /// The rules, weakest first (stable by specificity), so stronger rules overwrite weaker ones.
    private let ordered: [HeaderRule]

    /// Creates the middleware.
    /// - Parameter rules: The rules, in the order given (later wins between equally specific rules).
    public init(rules: [HeaderRule]) {
        ordered = rules.enumerated().sorted { ($0.element.specificity, $0.offset) < ($1.element.specificity, $1.offset) }.map(\.element)
    }

    /// Adds the matching rules' headers, then continues.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        var request = request
        var context = context
        try apply(to: &request, context: &context)
        return try await next(request, body, context)
    }

    /// Waits only in `next`.
    public var staysWithinDeadline: Bool { true }

    /// Applies the rules to a request (exposed for tests and custom chains).
    /// - Parameters:
    ///   - request: The request to change.
    ///   - context: The call's context; secret rules add their header names to it.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` when a computed value is not a valid header value.
    func apply(to request: inout HTTPRequest, context: inout RequestContext) throws(NetworkError) {
        let fullPath = request.path ?? "/"
        let path = fullPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        for rule in ordered where rule.matches(request, team: context.team, path: path) {
            for (name, source) in rule.headers where !context.ownHeaderNames.contains(name) {
                let value: String?
                switch source {
                case .fixed(let text): value = text
                case .requestID: value = context.requestID
                case .computed(let make): value = make(request, context)
                }
                guard let value else { continue }
                guard HTTPField.isValidValue(value) else {
                    throw .invalidRequest("the header rule for \(name.rawName) computed a value with control characters")
                }
                request.headerFields[name] = value
                if rule.isSecret { context.secretHeaderNames.insert(name.canonicalName) }
            }
        }
    }
}
