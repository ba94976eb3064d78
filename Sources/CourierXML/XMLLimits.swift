#if XML
    /// How large and how deep an XML document Courier agrees to decode.
    ///
    /// Every XML document Courier decodes (plain XML and SOAP envelopes) is scanned against these
    /// limits before a parser builds anything, so a hostile or broken server cannot make the process
    /// hold a huge tree or recurse without end. A document over a limit fails the call with
    /// `NetworkError.Kind.decoding` and an ``XMLDecodingError`` that names the limit.
    ///
    /// Document type declarations (`<!DOCTYPE …>`) are always refused: they are where external
    /// entities and entity expansion ("billion laughs") live, SOAP forbids them, and data APIs do not
    /// use them.
    public struct XMLLimits: Sendable, Hashable {
        /// The largest document, in bytes; 16 MiB by default, at most 1 GiB.
        public var maxBytes: Int
        /// The deepest element nesting (the root element is depth 1); 100 by default.
        public var maxDepth: Int

        /// Creates limits.
        /// - Parameters:
        ///   - maxBytes: The largest document, in bytes (at least 1, at most 1 GiB: the decoder's tree
        ///     numbers its elements with 32 bits, and every element takes at least 4 bytes).
        ///   - maxDepth: The deepest element nesting (at least 1).
        public init(maxBytes: Int = 16 << 20, maxDepth: Int = 100) {
            self.maxBytes = min(max(1, maxBytes), 1 << 30)
            self.maxDepth = max(1, maxDepth)
        }

        /// 16 MiB and 100 levels.
        public static let `default` = XMLLimits()
    }
#endif
