import HTTPTypes

/// The structured format a response body is in, read from its `Content-Type`.
///
/// ``ResponseDecoder/automatic`` uses it to pick JSON or XML for a `Decodable` output. It runs on
/// every call's hot path, so it compares the value's bytes in place and allocates nothing.
package enum BodyFormat: Sendable, Hashable {
    /// `application/json`, `text/json` or any `+json` type.
    case json
    /// `application/xml`, `text/xml` or any `+xml` type (`application/soap+xml`, `application/atom+xml`).
    case xml
    /// No `Content-Type` at all: decoded as JSON, as Courier always has.
    case unstated
    /// Some other media type: the `Content-Type` value as sent.
    case other(String)

    /// The format of a response head.
    package init(_ head: HTTPResponse) {
        self.init(contentType: head.headerFields[.contentType])
    }

    /// The format named by a `Content-Type` value; parameters (`; charset=utf-8`) and case are ignored.
    package init(contentType: String?) {
        guard let contentType else {
            self = .unstated
            return
        }
        var utf8 = contentType.utf8[...]
        if let semicolon = utf8.firstIndex(of: UInt8(ascii: ";")) { utf8 = utf8[..<semicolon] }
        while let first = utf8.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { utf8 = utf8.dropFirst() }
        while let last = utf8.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { utf8 = utf8.dropLast() }
        if utf8.isEmpty {
            self = .unstated
        } else if Self.equal(utf8, "application/json") || Self.equal(utf8, "text/json") || Self.ends(utf8, with: "+json") {
            self = .json
        } else if Self.equal(utf8, "application/xml") || Self.equal(utf8, "text/xml") || Self.ends(utf8, with: "+xml") {
            self = .xml
        } else {
            self = .other(contentType)
        }
    }

    /// ASCII case-insensitive equality with a lowercase literal.
    private static func equal(_ bytes: Substring.UTF8View, _ lowercase: StaticString) -> Bool {
        bytes.count == lowercase.utf8CodeUnitCount && ends(bytes, with: lowercase)
    }

    /// Whether `bytes` ends with a lowercase literal, ignoring ASCII case.
    private static func ends(_ bytes: Substring.UTF8View, with lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return lowercase.withUTF8Buffer { literal in
            zip(bytes.suffix(count), literal).allSatisfy { byte, expected in
                let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                return lowered == expected
            }
        }
    }
}
