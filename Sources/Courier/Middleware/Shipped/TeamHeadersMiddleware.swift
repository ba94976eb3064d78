import HTTPTypes

/// Adds the headers of every matching ``HeaderRule`` to each call, in the precedence
/// ``HeaderRule`` documents (the API object's own headers always win).
///
/// The client installs it first in the chain when ``ClientConfiguration/headerRules`` is not
/// empty; rules can also come from the configuration file (`headerRules`). Values of rules marked
/// secret join the call's secret header names, so they are redacted and never follow a redirect
/// to another origin.
public struct TeamHeadersMiddleware: Middleware {
    /// One header of a rule, ready to add: a fixed value is turned into a field once, here.
    private enum Addition: Sendable {
        case field(HTTPField)
        case requestID(HTTPField.Name)
        case computed(HTTPField.Name, @Sendable (HTTPRequest, RequestContext) -> String?)

        var name: HTTPField.Name {
            switch self {
            case .field(let field): field.name
            case .requestID(let name), .computed(let name, _): name
            }
        }
    }

    /// A rule ready to apply. A class, so walking the rules per call copies no strings or arrays.
    private final class PreparedRule: Sendable {
        let rule: HeaderRule
        let additions: [Addition]

        init(rule: HeaderRule, additions: [Addition]) {
            self.rule = rule
            self.additions = additions
        }
    }

    /// The rules, weakest first (stable by specificity), so stronger rules overwrite weaker ones.
    private let ordered: [PreparedRule]
    /// Whether any rule looks at the path, so the path is only cut from the query when needed.
    private let needsPath: Bool
    /// The most headers the rules can add to one request.
    private let maxAdditions: Int

    /// Creates the middleware.
    /// - Parameter rules: The rules, in the order given (later wins between equally specific rules).
    public init(rules: [HeaderRule]) {
        let sorted = rules.enumerated().sorted { ($0.element.specificity, $0.offset) < ($1.element.specificity, $1.offset) }
        ordered = sorted.map { _, rule in
            PreparedRule(
                rule: rule,
                additions: rule.headers.map { name, value in
                    switch value {
                    case .fixed(let text): .field(HTTPField(name: name, value: text))  // checked by HeaderRule
                    case .requestID: .requestID(name)
                    case .computed(let make): .computed(name, make)
                    }
                })
        }
        needsPath = rules.contains { $0.pathPrefix != nil }
        maxAdditions = rules.reduce(0) { $0 + $1.headers.count }
    }

    /// Adds the matching rules' headers, then continues.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        var request = request
        var context = context
        try rewrite(&request, context: &context)
        return try await next(request, body, context)
    }

    /// Applies the rules to a request (the work of ``intercept(_:body:context:next:)`` before `next`).
    /// - Parameters:
    ///   - request: The request to change.
    ///   - context: The call's context; secret rules add their header names to it.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` when a computed value is not a valid header value.
    func rewrite(_ request: inout HTTPRequest, context: inout RequestContext) throws(NetworkError) {
        var path: Substring = ""
        if needsPath {
            let fullPath = request.path ?? "/"
            path = fullPath[..<(fullPath.firstIndex(of: "?") ?? fullPath.endIndex)]
        }
        try apply(&request, context: &context, path: path)
    }

    /// Each header of each matching rule, weakest rule first, replacing any value of the same name
    /// from a weaker source and never one the API object set.
    private func apply(_ request: inout HTTPRequest, context: inout RequestContext, path: Substring) throws(NetworkError) {
        let checksOwnNames = !context.ownHeaderNames.isEmpty
        var reserved = false
        for prepared in ordered where prepared.rule.matches(request, team: context.team, path: path) {
            let isSecret = prepared.rule.isSecret
            for addition in prepared.additions {
                let name = addition.name
                if checksOwnNames, context.ownHeaderNames.contains(name) { continue }
                let field: HTTPField
                switch addition {
                case .field(let fixed):
                    field = fixed
                case .requestID:
                    field = HTTPField(name: name, value: context.requestID)
                case .computed(_, let make):
                    guard let value = make(request, context) else { continue }
                    guard HTTPField.isValidValue(value) else {
                        throw .invalidRequest("the header rule for \(name.rawName) computed a value with control characters")
                    }
                    field = HTTPField(name: name, value: value)
                }
                // A rule's header replaces every value of the same name set by a weaker source.
                if request.headerFields.contains(name) {
                    request.headerFields[fields: name] = [field]
                } else {
                    if !reserved {
                        // One copy of the caller's fields, with room for every rule's headers.
                        request.headerFields.reserveCapacity(request.headerFields.count + maxAdditions)
                        reserved = true
                    }
                    request.headerFields.append(field)
                }
                if isSecret { context.secretHeaderNames.insert(name.canonicalName) }
            }
        }
    }
}
