import HTTPTypes

/// Adds the headers of every matching ``HeaderRule`` to each call, in the precedence
/// ``HeaderRule`` documents (the API object's own headers always win).
///
/// The client installs it first in the chain when ``ClientConfiguration/headerRules`` is not
/// empty; rules can also come from the configuration file (`headerRules`). Values of rules marked
/// secret join the call's secret header names, so they are redacted and never follow a redirect
/// to another origin.
public struct TeamHeadersMiddleware: Middleware, BindableLink {
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
        /// The rule's fields in order, for the fast path: fixed values as they are, a request-id
        /// header with an empty value that is filled in per call.
        let template: [HTTPField]
        /// The positions in `template` that take the request id.
        let requestIDSlots: [Int]
        /// Whether a header is computed per call (those rules always take the general path).
        let hasComputed: Bool

        init(rule: HeaderRule, additions: [Addition]) {
            self.rule = rule
            self.additions = additions
            var template: [HTTPField] = []
            var requestIDSlots: [Int] = []
            var hasComputed = false
            for addition in additions {
                switch addition {
                case .field(let field): template.append(field)
                case .requestID(let name):
                    requestIDSlots.append(template.count)
                    template.append(HTTPField(name: name, value: ""))
                case .computed: hasComputed = true
                }
            }
            self.template = template
            self.requestIDSlots = requestIDSlots
            self.hasComputed = hasComputed
        }
    }

    /// The rules, weakest first (stable by specificity), so stronger rules overwrite weaker ones.
    private let ordered: [PreparedRule]
    /// Whether any rule looks at the path, so the path is only cut from the query when needed.
    private let needsPath: Bool
    /// The most headers the rules can add to one request.
    private let maxAdditions: Int
    /// Whether no header name appears twice across all rules, so any set of matching rules can be
    /// appended without one replacing another (the fast path).
    private let namesAreDistinct: Bool

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
        let names = rules.flatMap { $0.headers.map(\.name.canonicalName) }
        namesAreDistinct = Set(names).count == names.count && rules.count <= 64
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

    /// Team headers' layer of the chain: the rewrite, then `next`, in one async frame.
    func bound(to next: @escaping Middleware.Next) -> Middleware.Next {
        { request, body, context in
            var request = request
            var context = context
            try rewrite(&request, context: &context)
            return try await next(request, body, context)
        }
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
        // The API object's own headers are on the request, so the fast path sees them as conflicts.
        if namesAreDistinct, appendTemplates(&request, context: &context, path: path) { return }
        try applyOneByOne(&request, context: &context, path: path)
    }

    /// The fast path: when no added header can meet another of the same name (names distinct
    /// across rules, none already on the request, no computed values), each matching rule's
    /// fields are appended as one block and the request id is written into its slots.
    /// - Returns: `false`, having changed nothing, when the general path must run instead.
    private func appendTemplates(_ request: inout HTTPRequest, context: inout RequestContext, path: Substring) -> Bool {
        var matched: UInt64 = 0
        var count = 0
        for index in ordered.indices {
            let prepared = ordered[index]
            guard prepared.rule.matches(request, team: context.team, path: path) else { continue }
            if prepared.hasComputed { return false }
            matched |= 1 << UInt64(index)
            count += prepared.template.count
        }
        guard matched != 0 else { return true }
        if !request.headerFields.isEmpty {
            for field in request.headerFields {
                for index in ordered.indices where matched & (1 << UInt64(index)) != 0 {
                    for added in ordered[index].template where added.name == field.name { return false }
                }
            }
        }
        let base = request.headerFields.count
        request.headerFields.reserveCapacity(base + count)
        var requestIDField: HTTPField?
        for index in ordered.indices where matched & (1 << UInt64(index)) != 0 {
            let prepared = ordered[index]
            let start = request.headerFields.count
            request.headerFields.append(contentsOf: prepared.template)
            for slot in prepared.requestIDSlots {
                let name = prepared.template[slot].name
                if requestIDField?.name != name { requestIDField = HTTPField(name: name, value: context.requestID) }
                if let requestIDField { request.headerFields[start + slot] = requestIDField }
            }
            if prepared.rule.isSecret {
                for field in prepared.template { context.secretHeaderNames.insert(field.name.canonicalName) }
            }
        }
        return true
    }

    /// The general path: each header of each matching rule, weakest rule first, replacing any
    /// value of the same name from a weaker source and never one the API object set.
    private func applyOneByOne(_ request: inout HTTPRequest, context: inout RequestContext, path: Substring) throws(NetworkError) {
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
