import Courier
import Foundation

/// Which requests a ``MockTransport`` stub answers: method, path pattern, and optional query and
/// header values.
///
/// Path patterns match the request path segment by segment: a literal segment matches itself,
/// `*` or `:name` matches any one segment, and a final `**` matches any remainder (including
/// none). `/users/:id` matches `/users/42` but not `/users/42/posts`.
public struct MockRequestMatcher: Sendable, CustomStringConvertible {
    /// The method to match, or `nil` for any.
    public var method: HTTPRequest.Method?
    /// The path pattern.
    public var pathPattern: String {
        didSet { patternSegments = Self.segments(of: pathPattern) }
    }
    /// The pattern split once, so that matching a request does not split it again.
    private var patternSegments: [Substring]
    /// Query parameters that must be present with these (decoded) values.
    public var query: [String: String]
    /// Headers that must be present with these values (names case-insensitive).
    public var headers: [String: String]

    /// Creates a matcher.
    public init(method: HTTPRequest.Method?, path pathPattern: String, query: [String: String] = [:], headers: [String: String] = [:]) {
        self.method = method
        self.pathPattern = pathPattern
        self.patternSegments = Self.segments(of: pathPattern)
        self.query = query
        self.headers = headers
    }

    /// Whether the request matches.
    /// - Parameter request: The recorded request.
    public func matches(_ request: MockTransport.RecordedRequest) -> Bool {
        if let method, method != request.head.method { return false }
        guard Self.pathMatches(patternSegments, path: request.pathWithoutQuery) else { return false }
        if !query.isEmpty {
            let items = request.queryItems
            for (name, value) in query where !items.contains(where: { $0.name == name && $0.value == value }) {
                return false
            }
        }
        for (name, value) in headers {
            guard let fieldName = HTTPField.Name(name), request.head.headerFields[values: fieldName].contains(value) else { return false }
        }
        return true
    }

    /// `METHOD pattern`, for errors.
    public var description: String { "\(method?.rawValue ?? "*") \(pathPattern)" }

    private static func segments(of pattern: String) -> [Substring] {
        pattern.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// Walks the path's segments one by one against the pattern's, without splitting the path.
    private static func pathMatches(_ patternSegments: [Substring], path: Substring) -> Bool {
        var rest = path.utf8[...]
        func nextSegment() -> Substring.UTF8View.SubSequence? {
            while rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
            guard !rest.isEmpty else { return nil }
            let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            defer { rest = rest[end...] }
            return rest[..<end]
        }
        for segment in patternSegments {
            if segment == "**" { return true }
            guard let pathSegment = nextSegment() else { return false }
            if segment != "*", !segment.hasPrefix(":"), !segment.utf8.elementsEqual(pathSegment) { return false }
        }
        return nextSegment() == nil
    }
}
