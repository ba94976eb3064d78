/// How a client decodes compressed response bodies (`Content-Encoding`).
///
/// By default every request advertises `Accept-Encoding: gzip, deflate` and Courier decodes the
/// response, whichever transport carries it, under three limits: the decoded body counts against
/// ``ClientConfiguration/maxResponseBytes``; it may not grow past ``maxRatio`` times the bytes
/// received (once it is larger than ``ratioFloorBytes``); and at most ``maxCodings`` codings may be
/// chained. A truncated or corrupt stream, or a coding Courier does not decode, fails the call as
/// ``NetworkError/Kind/decoding``, never as success.
///
/// A call that sets its own `Accept-Encoding` header receives the bytes as they came, with
/// `Content-Encoding` left in the head (except on URLSession, whose library always decodes).
public struct Decompression: Sendable, Hashable {
    /// Whether requests advertise gzip and deflate and responses are decoded: `true` by default.
    /// When `false`, nothing is advertised and bodies are returned as they came.
    public var isEnabled: Bool
    /// The most decoded bytes per received byte: 100 by default (a JSON document compresses by
    /// about 5 to 20; a decompression bomb by 1,000).
    public var maxRatio: Int
    /// The most codings one response may chain (`gzip, gzip` is two): 2 by default.
    public var maxCodings: Int

    /// The decoded size under which the ratio is not checked: 1 MiB. A small body that compresses
    /// very well (a run of one byte) is harmless; a bomb is large.
    public static let ratioFloorBytes = 1 << 20
    /// The allowed range of ``maxRatio``.
    public static let maxRatioRange: ClosedRange<Int> = 2...100_000
    /// The allowed range of ``maxCodings``.
    public static let maxCodingsRange: ClosedRange<Int> = 1...4

    /// The defaults: enabled, a ratio of 100, two codings.
    public init(isEnabled: Bool = true, maxRatio: Int = 100, maxCodings: Int = 2) {
        self.isEnabled = isEnabled
        self.maxRatio = maxRatio
        self.maxCodings = maxCodings
    }

    /// Checks every value's range.
    /// - Parameter source: Where the values came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the first value out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.decompression = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "decompression.", source: source)
    }

    /// The `Accept-Encoding` value Courier sends: the codings it decodes.
    public static let acceptEncoding = "gzip, deflate"
}
