/// Percent-encoding rules, in one place (RFC 3986 and the WHATWG form encoding).
enum PercentEncoding {
    /// Unreserved characters: never encoded anywhere.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Characters left as they are inside a path segment: unreserved plus `! $ & ( ) * + , ; = : @`.
    /// The apostrophe and double quote are encoded even though RFC 3986 would allow the first.
    private static func isAllowedInPathSegment(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        return "!$&()*+,;=:@".utf8.contains(byte)
    }

    /// Characters a pre-encoded query value may contain as they are.
    private static func isAllowedInEncodedQuery(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        return "!$'()*+,;=:@/?".utf8.contains(byte)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }

    private static func encode(
        _ text: some StringProtocol,
        keepingEscapes: Bool,
        spaceAsPlus: Bool = false,
        isAllowed: (UInt8) -> Bool
    ) -> String {
        // Most paths and values need no encoding (no rule allows `%` or a space as they are):
        // return them without copying bytes one by one.
        if !text.utf8.contains(where: { !isAllowed($0) }) { return String(text) }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if keepingEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
            {
                out.append(contentsOf: bytes[index...index + 2])
                index += 3
                continue
            }
            if spaceAsPlus, byte == UInt8(ascii: " ") {
                out.append(UInt8(ascii: "+"))
            } else if isAllowed(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes one path segment written by a caller. A `/` inside it is encoded (`%2F`);
    /// an existing escape such as `%20` is kept, so already-encoded input is not encoded twice.
    static func pathSegment(_ segment: some StringProtocol) -> String {
        encode(segment, keepingEscapes: true, isAllowed: isAllowedInPathSegment)
    }

    /// Encodes a path whose `/` characters separate segments. (A `.` or `..` segment is refused
    /// by ``URLBuilder``, encoded or not: see ``RequestTarget/pathProblem(_:)``.)
    static func path(_ path: some StringProtocol) -> String {
        if !path.utf8.contains(where: { $0 != UInt8(ascii: "/") && !isAllowedInPathSegment($0) }) { return String(path) }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { pathSegment($0) }
            .joined(separator: "/")
    }

    /// Encodes a query name or a plain-text value: everything but unreserved characters is encoded,
    /// so `&`, `=`, `+`, `%` and spaces in data can never change the query's structure.
    static func queryComponent(_ text: some StringProtocol) -> String {
        encode(text, keepingEscapes: false, isAllowed: isUnreserved)
    }

    /// Encodes a name or value for `application/x-www-form-urlencoded` (space becomes `+`).
    static func formComponent(_ text: some StringProtocol) -> String {
        encode(text, keepingEscapes: false, spaceAsPlus: true, isAllowed: isUnreserved)
    }

    /// Whether a caller's pre-encoded query value is well formed: only allowed characters and
    /// complete `%XX` escapes.
    /// With `allowingSeparators`, `&` is accepted too (a whole query string rather than one value).
    static func isValidEncodedQueryValue(_ text: some StringProtocol, allowingSeparators: Bool = false) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            guard isAllowedInEncodedQuery(byte) || (allowingSeparators && byte == UInt8(ascii: "&")) else { return false }
            index += 1
        }
        return true
    }
}
