import HTTPTypes

/// Checks every transport applies to a response head, so that a malformed head fails with the
/// same ``NetworkError`` whichever transport read it.
package enum ResponseHeadChecks {
    /// The error for a head whose `Content-Length` is not one number: values that disagree
    /// (RFC 9110, section 8.6: an unrecoverable error), or a value that is not a number. Repeated
    /// identical values (`5, 5`) are one value.
    /// - Parameter fields: The head's fields; repeated fields and comma-joined values both count.
    /// - Returns: The error, or `nil` when the length is absent or well formed.
    package static func contentLengthProblem(in fields: HTTPFields) -> NetworkError? {
        var first: Substring?
        for field in fields where field.name == .contentLength {
            // The usual case, one plain number, without splitting or trimming.
            if first == nil, !field.value.isEmpty, field.value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                first = field.value[...]
                continue
            }
            for part in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                let value = part.trimmingWhitespace()
                guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit) else {
                    return invalid("the Content-Length \"\(field.value)\" is not a number")
                }
                if let first, first != value {
                    return invalid("the response has conflicting Content-Length values (\(first) and \(value))")
                }
                first = first ?? value
            }
        }
        return nil
    }

    private static func invalid(_ message: String) -> NetworkError {
        NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: message)
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
