/// How large and how deep an XML document Courier agrees to decode.
///
/// Every XML document Courier decodes (plain XML and SOAP envelopes) is scanned against these
/// limits before a parser builds anything, so a hostile or broken server cannot make the process
/// hold a huge tree or recurse without end. A document over a limit fails the call with
/// ``NetworkError/Kind/decoding`` and an ``XMLDecodingError`` that names the limit.
///
/// Document type declarations (`<!DOCTYPE …>`) are always refused: they are where external
/// entities and entity expansion ("billion laughs") live, SOAP forbids them, and data APIs do not
/// use them.
public struct XMLLimits: Sendable, Hashable {
    /// The largest document, in bytes; 16 MiB by default.
    public var maxBytes: Int
    /// The deepest element nesting (the root element is depth 1); 100 by default.
    public var maxDepth: Int

    /// Creates limits.
    /// - Parameters:
    ///   - maxBytes: The largest document, in bytes (at least 1).
    ///   - maxDepth: The deepest element nesting (at least 1).
    public init(maxBytes: Int = 16 << 20, maxDepth: Int = 100) {
        self.maxBytes = max(1, maxBytes)
        self.maxDepth = max(1, maxDepth)
    }

    /// 16 MiB and 100 levels.
    public static let `default` = XMLLimits()
}
