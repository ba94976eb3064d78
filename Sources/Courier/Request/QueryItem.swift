/// One query parameter of an API call.
///
/// Names and values are plain text; Courier percent-encodes them when it builds the URL, so
/// `QueryItem("q", "a&b=c")` is sent as `q=a%26b%3Dc`. For a value that is already
/// percent-encoded (copied from another URL, say) use ``init(name:percentEncodedValue:)``.
public struct QueryItem: Sendable, Hashable {
    /// The parameter name, as plain text.
    public var name: String
    /// The value, or `nil` for a bare name (`?flag`).
    public var value: String?
    /// Whether ``value`` is already percent-encoded and must be sent as it is.
    public var isValuePercentEncoded: Bool

    /// Creates a parameter from plain text.
    /// - Parameters:
    ///   - name: The name, unencoded.
    ///   - value: The value, unencoded, or `nil` for a bare name.
    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
        self.isValuePercentEncoded = false
    }

    /// Creates a parameter whose value is already percent-encoded. Courier validates it and
    /// sends it unchanged; a value with characters that are not allowed in a query is an
    /// invalid request.
    /// - Parameters:
    ///   - name: The name, unencoded.
    ///   - percentEncodedValue: The value, already percent-encoded.
    public init(name: String, percentEncodedValue: String) {
        self.name = name
        self.value = percentEncodedValue
        self.isValuePercentEncoded = true
    }
}
