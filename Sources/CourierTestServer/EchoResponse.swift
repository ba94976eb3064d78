/// What the test server's `/echo` route sends back: the request as the server saw it.
public struct EchoResponse: Codable, Sendable, Hashable {
    /// The request method.
    public var method: String
    /// The path as received, still percent-encoded, without the query.
    public var path: String
    /// The query as received, still percent-encoded (empty when there was none).
    public var rawQuery: String
    /// The query items, percent-decoded, in order.
    public var query: [[String]]
    /// The request headers as received, in order, repeated names kept.
    public var headers: [[String]]
    /// The body, decoded as UTF-8 (invalid bytes replaced); at most 1 MiB of it.
    public var body: String
    /// The body's full length in bytes.
    public var bodyLength: Int

    /// The first value of a header, compared case-insensitively.
    /// - Parameter name: The header name.
    public func header(_ name: String) -> String? {
        headers.first { $0.first?.lowercased() == name.lowercased() }?.last
    }

    /// Every value of a header, in order.
    /// - Parameter name: The header name.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap(\.last)
    }
}
