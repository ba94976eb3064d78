import Foundation
import HTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// What a request's target may be: the one rule every URL that reaches a transport passes, whether
/// a caller wrote it (``URLBuilder``), a server sent it (``RedirectRule``) or a middleware changed
/// it (checked again before each attempt, in `LinkChain.attempt`).
///
/// A target that passes these checks reads the same to every parser: the host is a plain
/// registered name or an IP literal in ASCII (nothing a parser could split differently), the path
/// holds only characters RFC 3986 allows, with complete escapes, and no `.` or `..` segment that
/// one library collapses and another sends. So the host the origin check compares is the host each
/// transport connects to.
package enum RequestTarget {
    /// The host in canonical form (lowercase, IPv6 in brackets), or why it is not a host.
    ///
    /// A host is a registered name (ASCII letters, digits, `-`, `.` and `_`, at most 253 bytes,
    /// no empty label) or an IP literal (`[` hex digits, `:` and `.` `]`). Everything else is
    /// refused: `/`, `\`, `@`, `?`, `#`, `%`, `:` outside brackets, whitespace, control characters
    /// and non-ASCII text (write an internationalised name in its ASCII `xn--` form).
    /// - Parameter host: The host, already percent-decoded.
    /// - Returns: The canonical host, or a sentence saying what is wrong.
    package static func canonicalHost(_ host: some StringProtocol) -> Result<String, HostProblem> {
        let bytes = Array(host.utf8)
        guard !bytes.isEmpty else { return .failure(HostProblem("the host is empty")) }
        if bytes.first == UInt8(ascii: "[") {
            guard bytes.count > 2, bytes.last == UInt8(ascii: "]") else {
                return .failure(HostProblem("the IPv6 host is not closed with ]"))
            }
            let inner = bytes[1..<(bytes.count - 1)]
            guard inner.contains(UInt8(ascii: ":")),
                inner.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return .failure(HostProblem("the IPv6 host may hold only hex digits, ':' and '.' (no zone)")) }
            // Written in its one compressed form (RFC 5952, as libcurl rewrites it), so the text
            // compared is the address connected to.
            guard let address = ipv6(String(decoding: inner, as: UTF8.self)) else {
                return .failure(HostProblem("the IPv6 host is not a valid address"))
            }
            return .success("[" + address + "]")
        }
        guard bytes.count <= 253 else { return .failure(HostProblem("the host is longer than 253 bytes")) }
        if let bad = bytes.first(where: { !isHostByte($0) }) {
            return .failure(HostProblem(describe(bad)))
        }
        // A name whose last label is a number is an IPv4 address in one of the forms libcurl reads
        // (`4`, `127.1`, `0x7f.1`, `0177.0.0.1`, `2130706433`): written in its one dotted-decimal
        // form, so the text compared is the address connected to; a malformed one (`1.2.3.999`) is
        // refused.
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        // `127.0.0.1.`: an address to a browser, a name to libcurl; refused rather than guessed.
        if bytes.last == UInt8(ascii: "."), labels.count >= 2, isNumber(labels[labels.count - 2]) {
            return .failure(HostProblem("the host is an IPv4 address with a trailing dot"))
        }
        if let last = labels.last, isNumber(last) {
            guard let address = ipv4(bytes) else { return .failure(HostProblem("the host is a malformed IPv4 address")) }
            return .success(address)
        }
        var labelLength = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                // A trailing dot (`example.com.`) is a name's absolute form; an empty label is not a name.
                guard labelLength > 0 else {
                    return .failure(HostProblem("the host has an empty label"))
                }
                labelLength = 0
            } else {
                labelLength += 1
                guard labelLength <= 63 else { return .failure(HostProblem("a label of the host is longer than 63 bytes")) }
            }
        }
        return .success(String(decoding: bytes, as: UTF8.self).lowercased())
    }

    /// Whether an IPv4 label is a number: decimal digits, or `0x` and hex digits (the WHATWG URL
    /// standard's "ends in a number").
    private static func isNumber<Label: Collection<UInt8>>(_ label: Label) -> Bool {
        guard let first = label.first else { return false }
        if label.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return true }
        let rest = label.dropFirst()
        guard first == UInt8(ascii: "0"), let x = rest.first, x | 0x20 == UInt8(ascii: "x") else { return false }
        return rest.dropFirst().allSatisfy(isHexDigit)
    }

    /// The RFC 5952 text of an IPv6 address (`inet_pton`, then `inet_ntop`), lowercase; `nil` when
    /// it is not one.
    static func ipv6(_ text: String) -> String? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        let text = buffer.withUnsafeBufferPointer { pointer in pointer.baseAddress.map { String(cString: $0) } ?? "" }
        return text.isEmpty ? nil : text.lowercased()
    }

    /// The dotted-decimal form of an IPv4 address written as 1 to 4 numbers (decimal, octal with a
    /// leading `0`, or hex with `0x`) joined by dots, the last filling the remaining bytes: how
    /// libcurl (`ipv4_normalize`) and the WHATWG URL standard read such a host; `nil` when it is not
    /// one.
    static func ipv4(_ bytes: [UInt8]) -> String? {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 32 else { return nil }
            var digits = part[...]
            var radix: UInt64 = 10
            if digits.count > 1, digits.first == UInt8(ascii: "0") {
                digits = digits.dropFirst()
                radix = 8
                if let x = digits.first, x | 0x20 == UInt8(ascii: "x") {
                    digits = digits.dropFirst()
                    radix = 16
                    // `0x` alone is no number (libcurl reads such a host as a name).
                    guard !digits.isEmpty else { return nil }
                }
            }
            var value: UInt64 = 0
            for byte in digits {
                let digit: UInt64
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt64(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt64(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
                guard digit < radix else { return nil }
                value = value * radix + digit
                guard value <= UInt64(UInt32.max) else { return nil }
            }
            numbers.append(value)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        let last = numbers[numbers.count - 1]
        guard last < (UInt64(1) << (8 * UInt64(5 - numbers.count))) else { return nil }
        var address = last
        for (index, number) in numbers.dropLast().enumerated() { address += number << (8 * UInt64(3 - index)) }
        return [24, 16, 8, 0].map { String((address >> UInt64($0)) & 0xFF) }.joined(separator: ".")
    }

    /// Why a text is not a host, in words for an error message.
    package struct HostProblem: Error, Equatable, Sendable {
        /// The reason.
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Why `request`'s target is not one Courier sends, or `nil` when it is: `http` or `https`, an
    /// authority that is a canonical host (see ``canonicalHost(_:)``: lowercase) with an optional
    /// port (1 to 65535, no leading zero), and a path and query of allowed characters with complete
    /// escapes and no `.` or `..` segment, plain or percent-encoded. Allocates nothing when the
    /// target is fine (it runs before every attempt).
    /// - Parameter request: A request head about to reach a transport.
    /// - Returns: ``NetworkError/Kind/invalidRequest`` naming the part, or `nil`.
    package static func problem(in request: HTTPRequest) -> NetworkError? {
        let scheme = request.scheme ?? ""
        guard scheme == "http" || scheme == "https" else {
            return .invalidRequest("the request's scheme '\(scheme.prefix(16))' is not http or https")
        }
        guard let authority = request.authority, isCanonicalAuthority(authority) else {
            // Whatever precedes an `@` may be user info: never shown.
            var shown = String((request.authority ?? "").prefix(300))
            if let at = shown.lastIndex(of: "@") { shown = Redaction.placeholder + "@" + shown[shown.index(after: at)...] }
            return .invalidRequest(
                "the request's authority '\(shown.debugDescription.dropFirst().dropLast())' is not a lowercase host name or IP literal with an optional port"
            )
        }
        if let reason = pathProblem(request.path ?? "") {
            return .invalidRequest("the request's path \(reason)")
        }
        return nil
    }

    /// Whether `authority` is `host` or `host:port` exactly as ``canonicalHost(_:)`` writes the host
    /// (lowercase) and with a port from 1 to 65535 without a leading zero: one pass over the bytes.
    static func isCanonicalAuthority(_ authority: String) -> Bool {
        var text = authority
        return text.withUTF8 { isCanonicalAuthority(bytes: $0) }
    }

    private static func isCanonicalAuthority(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        var index = 0
        if bytes[0] == UInt8(ascii: "[") {
            index = 1
            var colons = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "."): break
                case UInt8(ascii: ":"): colons += 1
                default: return false
                }
                index += 1
            }
            guard index < bytes.count, index > 1, colons > 0 else { return false }
            // Its one compressed form (an IPv6 host is rare: this allocates).
            let inner = String(decoding: UnsafeBufferPointer(rebasing: bytes[1..<index]), as: UTF8.self)
            guard ipv6(inner) == inner else { return false }
            index += 1
        } else {
            var labelLength = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                switch bytes[index] {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    labelLength += 1
                    guard labelLength <= 63 else { return false }
                case UInt8(ascii: "."):
                    guard labelLength > 0 else { return false }
                    labelLength = 0
                default: return false
                }
                index += 1
            }
            guard index > 0, index <= 253 else { return false }
            // A number as the last label makes it an IPv4 address: only its dotted-decimal form.
            var lastLabel = index
            while lastLabel > 0, bytes[lastLabel - 1] != UInt8(ascii: ".") { lastLabel -= 1 }
            if lastLabel < index, isNumber(bytes[lastLabel..<index]) {
                guard isDottedDecimal(UnsafeBufferPointer(rebasing: bytes[0..<index])) else { return false }
            }
        }
        guard index < bytes.count else { return true }
        // `:port`: 1 to 5 digits, no leading zero, at most 65535.
        guard bytes[index] == UInt8(ascii: ":") else { return false }
        index += 1
        guard (1...5).contains(bytes.count - index), bytes[index] != UInt8(ascii: "0") else { return false }
        var port = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
            port = port * 10 + Int(byte - UInt8(ascii: "0"))
            index += 1
        }
        return port <= 65_535
    }

    /// Whether `bytes` is four decimal numbers from 0 to 255 without leading zeros, joined by dots.
    private static func isDottedDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        var first: UInt8 = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, digits == 1 || first != UInt8(ascii: "0"), value <= 255 else { return false }
                parts += 1
                (value, digits) = (0, 0)
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 3 else { return false }
            if digits == 0 { first = byte }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return parts == 3 && digits > 0 && (digits == 1 || first != UInt8(ascii: "0")) && value <= 255
    }

    /// Why a path and query is not sendable, or `nil`: it starts with `/`, holds only RFC 3986
    /// path and query characters and complete `%XX` escapes, no `#`, and no `.` or `..` segment,
    /// whether written plainly or percent-encoded (`%2e`, `.%2E`, ...): libcurl 8 collapses encoded
    /// dots too, so only a path without them reads the same to every transport.
    static func pathProblem(_ path: String) -> String? {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return "does not start with '/'" }
        var inQuery = false
        var dots = 0  // dots in the segment so far, plain or encoded; -1 once it holds anything else
        var pending = 0  // hex digits still expected after a '%'
        var escape: UInt8 = 0
        for byte in bytes {
            if pending > 0 {
                guard isHexDigit(byte) else { return "has an incomplete %-escape" }
                escape = escape << 4 | hexValue(byte)
                pending -= 1
                if pending == 0, !inQuery, dots >= 0 { dots = escape == 0x2E ? dots + 1 : -1 }
                continue
            }
            if !inQuery, byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                if dots == 1 || dots == 2 { return "has a '.' or '..' segment (plain or percent-encoded)" }
                dots = 0
                if byte == UInt8(ascii: "?") { inQuery = true }
                continue
            }
            if byte == UInt8(ascii: "%") {
                pending = 2
                escape = 0
                continue
            }
            guard isPathByte(byte) else { return "holds \(describe(byte))" }
            if !inQuery, dots >= 0 { dots = byte == UInt8(ascii: ".") ? dots + 1 : -1 }
        }
        if pending > 0 { return "has an incomplete %-escape" }
        if !inQuery, dots == 1 || dots == 2 { return "has a '.' or '..' segment (plain or percent-encoded)" }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: byte - UInt8(ascii: "A") + 10
        }
    }

    /// `text` (a path, or a query with `inQuery`) with every byte a target may not hold as it is
    /// percent-encoded, a `%` that starts no complete escape included: what a server's `Location`
    /// path becomes before it is sent (it is never refused for a stray `|` or `"`).
    static func encodingStray(_ text: String, inQuery: Bool) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for (index, byte) in bytes.enumerated() {
            let completeEscape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
            if completeEscape || (isPathByte(byte) && (inQuery || byte != UInt8(ascii: "?"))) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An absolute path with its `.` and `..` segments resolved (RFC 3986 §5.2.4), encoded ones
    /// (`%2e`, `.%2E`, ...) too, as libcurl 8 resolves them; `/` when empty.
    static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch dots(in: segment) {
            case 1:
                if isLast { output.append("") }
            case 2:
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }

    /// 1 for a `.` segment, 2 for `..`, plain or percent-encoded; 0 for any other segment.
    private static func dots(in segment: Substring) -> Int {
        let text = segment.lowercased().replacingOccurrences(of: "%2e", with: ".")
        switch text {
        case ".": return 1
        case "..": return 2
        default: return 0
        }
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// Unreserved, sub-delimiters, `:` `@` `/` `?`: RFC 3986's `pchar`, path and query.
    private static func isPathByte(_ byte: UInt8) -> Bool {
        if isHostByte(byte) || byte == UInt8(ascii: "~") { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
            UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default: return false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x80...: "non-ASCII text (write an internationalised host in its ASCII xn-- form, and encode other text)"
        case UInt8(ascii: " "): "a space"
        case ..<0x20, 0x7F: "the control character U+\(String(byte, radix: 16, uppercase: true))"
        default: "the character '\(Character(Unicode.Scalar(byte)))'"
        }
    }
}
