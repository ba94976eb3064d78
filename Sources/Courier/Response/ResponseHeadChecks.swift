import HTTPTypes

/// The checks every response head passes, so that a malformed head fails with the same
/// ``NetworkError`` whichever transport read it.
///
/// The chain runs ``problem(in:limits:)`` on every head a transport returns (see `LinkChain`):
/// the size limits and `Content-Length`. The field syntax (``fieldNameProblem(_:)``,
/// ``fieldValueProblem(_:)-(UnsafeRawBufferPointer)``) is checked where raw bytes are still visible, because
/// `HTTPField` replaces what it cannot hold: curl's head parser and URLSession's conversion use
/// it; AsyncHTTPClient's parser (llhttp) already refuses the same lines.
public enum ResponseHeadChecks {
    /// The error for a head that breaks a limit or whose `Content-Length` is not one number.
    /// - Parameters:
    ///   - head: The response head.
    ///   - limits: The call's limits.
    /// - Returns: The error, or `nil` when the head passes.
    public static func problem(in head: HTTPResponse, limits: ResponseHeadLimits) -> NetworkError? {
        let fields = head.headerFields
        if fields.count > limits.maxFields {
            return invalid("the response head has \(fields.count) fields, more than the limit of \(limits.maxFields)")
        }
        // One pass: the bytes, and whether a Content-Length needs its own look.
        var bytes = 0
        var hasLength = false
        for field in fields {
            // (The value's bytes as stored: a transport that builds fields from bytes keeps them
            // as bytes, and reading `value` would make a new string.)
            bytes += field.name.rawName.utf8.count + field.withUnsafeBytesOfValue(\.count) + 4
            hasLength = hasLength || field.name == .contentLength
        }
        if bytes > limits.maxBytes {
            return invalid("the response head has \(bytes) bytes of fields, more than the limit of \(limits.maxBytes)")
        }
        return hasLength ? contentLengthProblem(in: fields) : nil
    }

    /// The error for a head whose `Content-Length` is not one number: values that disagree
    /// (RFC 9110, section 8.6: an unrecoverable error), a value that is not a number, or one too
    /// large for any body (more than 2^63 - 1). Repeated identical values (`5, 5`) are one value.
    /// - Parameter fields: The head's fields; repeated fields and comma-joined values both count.
    /// - Returns: The error, or `nil` when the length is absent or well formed.
    public static func contentLengthProblem(in fields: HTTPFields) -> NetworkError? {
        var first: Substring?
        // The usual case, a first value that is one plain number, is checked on its bytes; it is
        // read as text only when another value must be compared with it.
        var plainFirst: HTTPField?
        for field in fields where field.name == .contentLength {
            if first == nil, plainFirst == nil, field.withUnsafeBytesOfValue(isPlainNumber) {
                plainFirst = field
                continue
            }
            if let plain = plainFirst {
                first = plain.value[...]
                plainFirst = nil
            }
            for part in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                let value = part.trimmingWhitespace()
                guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit) else {
                    return invalid("the Content-Length \"\(field.value)\" is not a number")
                }
                guard Int64(value) != nil else {
                    return invalid("the Content-Length \(value) is larger than any body can be")
                }
                if let first, first != value {
                    return invalid("the response has conflicting Content-Length values (\(first) and \(value))")
                }
                first = first ?? value
            }
        }
        return nil
    }

    /// Why the bytes before a field line's colon are not a field name (RFC 9110, section 5.1: a
    /// token; whitespace before the colon is refused, RFC 9112, section 5.1), or `nil`.
    /// One to 18 ASCII digits: a length that fits an `Int64`, with nothing to trim or split.
    private static func isPlainNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.count <= 18 && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Why a field name is not one (RFC 9110, section 5.1: a token, with no whitespace before its
    /// colon), or `nil`.
    public static func fieldNameProblem(_ name: some BidirectionalCollection<UInt8>) -> String? {
        guard let last = name.last else { return "a header line has an empty field name" }
        if last == 0x20 || last == 0x09 { return "a header field name is followed by whitespace before its colon" }
        guard name.allSatisfy(isTokenByte) else { return "a header field name has a character a name may not have" }
        return nil
    }

    /// Why a field value is not one (RFC 9110, section 5.5: no NUL, CR, LF or other control
    /// character except horizontal tab), or `nil`.
    public static func fieldValueProblem(_ value: some Sequence<UInt8>) -> String? {
        for byte in value where isForbiddenInValue(byte) { return valueProblem(byte) }
        return nil
    }

    /// The same check over raw bytes. curl's head parser runs it on every header line, from
    /// another module: the generic form is not specialised across modules there, and its
    /// iteration allocated on every byte (about 85 `malloc`s per call over HTTP/1.1).
    public static func fieldValueProblem(_ value: UnsafeRawBufferPointer) -> String? {
        for byte in value where isForbiddenInValue(byte) { return valueProblem(byte) }
        return nil
    }

    /// The same check over a part of raw bytes (see the form above).
    public static func fieldValueProblem(_ value: Slice<UnsafeRawBufferPointer>) -> String? {
        fieldValueProblem(UnsafeRawBufferPointer(rebasing: value))
    }

    private static func isForbiddenInValue(_ byte: UInt8) -> Bool {
        byte < 0x20 && byte != 0x09 || byte == 0x7F
    }

    private static func valueProblem(_ byte: UInt8) -> String {
        switch byte {
        case 0x00: "a header value has a NUL byte"
        case 0x0D: "a header value has a bare CR"
        case 0x0A: "a header value has a bare LF"
        default: "a header value has a control character"
        }
    }

    /// The error for a head that failed one of the checks above.
    public static func invalid(_ message: String) -> NetworkError {
        NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: message)
    }

    /// Whether `byte` may appear in a token (`tchar`, RFC 9110, section 5.6.2).
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingWhitespace() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
