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
        return "invalid configuration: \(key) is \(found) (from \(source)); allowed: \(allowed)"
    }
}

extension ConfigurationError {
    /// Throws unless `value` lies in `range`: the one shape of every range check in `validate`.
    /// - Parameters:
    ///   - value: The configured value.
    ///   - range: What is allowed.
    ///   - key: The configuration key, for the error.
    ///   - allowed: The range as the error says it.
    ///   - source: Where the value came from.
    /// - Throws: ``ConfigurationError`` naming the key and the value.
    package static func check<Value: Comparable>(
        _ value: Value, in range: ClosedRange<Value>, key: String, allowed: String, source: String
    ) throws(ConfigurationError) {
        if !range.contains(value) { throw ConfigurationError(key: key, value: "\(value)", allowed: allowed, source: source) }
    }
}
