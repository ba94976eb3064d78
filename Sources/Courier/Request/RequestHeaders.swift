import HTTPTypes

/// The headers an API object adds to its request, in order, repeated names allowed.
///
/// Written as a dictionary literal: `["Accept": "application/json", "X-Trace": "1"]`.
/// Values are validated when the request is built: a name that is not an HTTP token, or a value
/// containing CR, LF, NUL or another control character, makes the call fail with
/// ``NetworkError/Kind/invalidRequest`` before anything is sent. Nothing is silently dropped.
public struct RequestHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// One header line.
    public struct Entry: Sendable, Hashable {
        /// The header name, as written.
        public var name: String
        /// The header value, as written.
        public var value: String
    }

    /// The headers in the order they were added.
    public private(set) var entries: [Entry]

    /// Creates headers from a dictionary literal; repeated names are kept in order.
    /// - Parameter elements: Name and value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        entries = elements.map { Entry(name: $0.0, value: $0.1) }
    }

    /// Creates headers from name and value pairs.
    /// - Parameter pairs: Name and value pairs, in order.
    public init(_ pairs: [(String, String)] = []) {
        entries = pairs.map { Entry(name: $0.0, value: $0.1) }
    }

    /// Appends a header, keeping any earlier one with the same name.
    /// - Parameters:
    ///   - name: The header name.
    ///   - value: The header value.
    public mutating func add(_ name: String, _ value: String) {
        entries.append(Entry(name: name, value: value))
    }

    /// Sets a header, removing every earlier one with the same name (compared case-insensitively).
    /// - Parameters:
    ///   - name: The header name.
    ///   - value: The header value.
    public mutating func replace(_ name: String, _ value: String) {
        let lower = name.lowercased()
        entries.removeAll { $0.name.lowercased() == lower }
        entries.append(Entry(name: name, value: value))
    }

    /// The first value for a name, compared case-insensitively.
    /// - Parameter name: The header name.
    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return entries.first { $0.name.lowercased() == lower }?.value
    }

    /// Iterates the entries in order.
    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    /// Converts to `HTTPFields`, rejecting invalid names and values.
    ///
    /// - Parameter secretNames: Extra header names whose values must not appear in the error.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` naming the header.
    func validatedFields(secretNames: Set<String> = []) throws(NetworkError) -> HTTPFields {
        var fields = HTTPFields()
        for entry in entries {
            fields.append(try HeaderValidation.field(name: entry.name, value: entry.value, secretNames: secretNames))
        }
        return fields
    }
}

/// Validation of header names and values, shared by every way a header enters a request.
enum HeaderValidation {
    /// Builds a field, or throws when the name is not a token, names a framing header
    /// (``isFraming(_:)``), or the value has control characters.
    static func field(name: String, value: String, secretNames: Set<String> = []) throws(NetworkError) -> HTTPField {
        guard let fieldName = HTTPField.Name(name) else {
            throw .invalidRequest("the header name '\(name.debugDescription.dropFirst().dropLast())' is not a valid HTTP token")
        }
        if isFraming(fieldName) { throw framingRefused(fieldName) }
        let forbidden = value.unicodeScalars.first { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
        if let forbidden {
            let shown = Redaction.isSensitiveHeader(name, extraSecretNames: secretNames) ? Redaction.placeholder : value.debugDescription
            throw .invalidRequest(
                "the value of header '\(name)' contains the control character U+\(String(forbidden.value, radix: 16, uppercase: true)) (CR, LF and NUL are never sent): \(shown)"
            )
        }
        guard HTTPField.isValidValue(value) else {
            throw .invalidRequest("the value of header '\(name)' is not a valid HTTP field value (leading or trailing whitespace?)")
        }
        return HTTPField(name: fieldName, value: value)
    }

    /// Whether `name` belongs to the client: it frames the message or the connection
    /// (`Content-Length`, `Transfer-Encoding`, `Host`, `Connection`, `TE`, `Upgrade`, `Keep-Alive`),
    /// or it is for the proxy hop (`Proxy-Authorization`, `Proxy-Connection`). The client and the
    /// transport compute these from the body, the target and the proxy configuration (its URL's
    /// user and password); a caller's or a middleware's is refused before anything is sent (here
    /// when the request is built, and again before each attempt), the same on every transport, so
    /// no header can describe a body other than the one sent, and no proxy credential reaches the
    /// origin inside a tunnel.
    static func isFraming(_ name: HTTPField.Name) -> Bool {
        let text = name.canonicalName
        switch text.utf8.count {
        case 2: return text == "te"
        case 4: return text == "host"
        case 7: return text == "upgrade"
        case 10: return text == "connection" || text == "keep-alive"
        case 14: return text == "content-length"
        case 16: return text == "proxy-connection"
        case 17: return text == "transfer-encoding"
        case 19: return text == "proxy-authorization"
        default: return false
        }
    }

    /// The error for a header of the client's (``isFraming(_:)``) that a caller or a middleware set.
    static func framingRefused(_ name: HTTPField.Name) -> NetworkError {
        if name.canonicalName.hasPrefix("proxy-") {
            return .invalidRequest(
                "the header '\(name.rawName)' is for the proxy hop; the client sends it from the proxy configuration (ProxyConfiguration, its URL's user and password), so it is never taken from a caller or a middleware"
            )
        }
        return .invalidRequest(
            "the header '\(name.rawName)' frames the message or the connection; the client computes it from the body and the URL, so it is never taken from a caller or a middleware"
        )
    }
}
