import HTTPTypes

/// A content coding Courier decodes (RFC 9110, section 8.4.1).
enum ContentCoding: Sendable, Equatable {
    /// gzip (RFC 1952); `x-gzip` is the same. Several members in a row are one body.
    case gzip
    /// deflate: the zlib format (RFC 1950) as HTTP defines it, or raw deflate, which some servers
    /// send instead (told apart by the first two bytes).
    case deflate

    /// The codings of a head, in the order they must be undone (the last applied first), without
    /// `identity`; empty when the body is not encoded.
    /// - Parameters:
    ///   - fields: The response's fields; repeated `Content-Encoding` fields and lists both count.
    ///   - maxCodings: The most codings allowed.
    /// - Throws: ``NetworkError/Kind/decoding`` for a coding Courier does not decode, or too many.
    static func decodingOrder(of fields: HTTPFields, maxCodings: Int) throws(NetworkError) -> [ContentCoding] {
        var applied: [ContentCoding] = []
        for field in fields where field.name == .contentEncoding {
            for part in field.value.split(separator: ",") {
                let name = part.trimmingWhitespace().lowercased()
                switch name {
                case "gzip", "x-gzip": applied.append(.gzip)
                case "deflate": applied.append(.deflate)
                case "identity", "": continue
                default:
                    throw failure(
                        "the response uses the content coding \"\(name)\", which Courier does not decode (it accepts gzip and deflate)")
                }
                guard applied.count <= maxCodings else {
                    throw failure("the response chains more than \(maxCodings) content codings (\(field.value))")
                }
            }
        }
        return applied.reversed()
    }

    /// A content-decoding failure: the body cannot be trusted.
    static func failure(_ message: String) -> NetworkError {
        NetworkError(kind: .decoding, phase: .receiving, message: message)
    }
}
