/// The most a response head may hold. Every transport's head passes the same check in the core
/// (see ``NetworkClient/linkOrder``); a head over a limit fails the call as
/// ``NetworkError/Kind/invalidResponse``. A transport that reads heads itself (curl) also stops
/// reading at the limit, so a hostile server cannot make the process buffer an endless head.
///
/// ```swift
/// var configuration = ClientConfiguration(baseURL: "https://api.example.com", transport: "curl")
/// configuration.responseHeadLimits.maxFields = 200
/// ```
public struct ResponseHeadLimits: Sendable, Hashable {
    /// The most header fields in one head, repeated names counted each time: 100 by default.
    public var maxFields: Int
    /// The most bytes of header fields in one head, counting each field as its name, its value
    /// and four bytes (`": "` and CRLF): 64 KiB by default.
    public var maxBytes: Int
    /// The most interim (`1xx`) responses before the final one, where the transport can see them
    /// (curl; AsyncHTTPClient skips them unseen, URLSession refuses the first): 10 by default.
    public var maxInterimResponses: Int

    /// The defaults: 100 fields, 64 KiB, 10 interim responses.
    public init(maxFields: Int = 100, maxBytes: Int = 64 * 1024, maxInterimResponses: Int = 10) {
        self.maxFields = maxFields
        self.maxBytes = maxBytes
        self.maxInterimResponses = maxInterimResponses
    }

    /// The allowed range of ``maxFields``.
    public static let maxFieldsRange: ClosedRange<Int> = 1...10_000
    /// The allowed range of ``maxBytes`` (1 KiB to 1 MiB).
    public static let maxBytesRange: ClosedRange<Int> = 1024...(1 << 20)
    /// The allowed range of ``maxInterimResponses``.
    public static let maxInterimResponsesRange: ClosedRange<Int> = 0...1000

    /// Checks every value's range.
    /// - Parameter source: Where the values came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the first value out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.responseHeadLimits = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "responseHead.", source: source)
    }
}
