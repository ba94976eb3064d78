/// A configuration that cannot be used: an unknown transport name, a malformed file, a value out
/// of range. It names the key, the value it found and what is allowed.
///
/// This is a start-up error, apart from ``NetworkError`` (which is about calls).
public struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The key that is wrong, for example `transport`, `timeouts.request` or `COURIER_TRANSPORT`.
    public var key: String
    /// The value found, as text, when there was one.
    public var value: String?
    /// What the key accepts, for example `mock, urlsession` or `1 to 3600 seconds`.
    public var allowed: String
    /// Where the value came from (`code`, `environment`, or the file's path).
    public var source: String
    /// The line of a malformed JSON document where reading stopped (from 1), when known.
    public var line: Int?
    /// The column on ``line`` (from 1), when known.
    public var column: Int?
    /// The nearest known key, for an unknown one.
    public var suggestion: String?
    /// The environment variable the value came from, when it came from one.
    public var variable: String?

    /// Creates an error.
    public init(key: String, value: String?, allowed: String, source: String) {
        self.key = key
        self.value = value
        self.allowed = allowed
        self.source = source
    }

    /// One line naming the key, the value, the allowed values and the source.
    public var description: String {
        let found = value.map { "'\($0)'" } ?? "nothing usable"
        var origin = variable.map { "\($0) in the \(source)" } ?? source
        if let line { origin += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        var text = "invalid configuration: \(key) is \(found) (from \(origin)); allowed: \(allowed)"
        if let suggestion { text += "; did you mean '\(suggestion)'?" }
        return text
    }
}
