import Foundation

// How the table's entries are made: one constructor per kind of value, each reading the value
// (with an error naming the key) and writing it through a key path.

extension ConfigurationKey {
    package init(
        _ name: String, _ kind: Kind, default defaultValue: String, _ summary: String,
        apply: @escaping @Sendable (inout ConfigurationLoad, ConfigurationValue, String) throws(ConfigurationError) -> Void
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        set = apply
    }

    package typealias Path<Value> = any WritableKeyPath<ClientConfiguration, Value> & Sendable

    /// A key whose value is read by `read` and written through `path`.
    static func typed<Value>(
        _ name: String, _ kind: Kind, _ path: Path<Value>, default value: String, _ summary: String,
        read: @escaping @Sendable (ConfigurationValue, String, ConfigurationLoad) throws(ConfigurationError) -> Value
    ) -> Self {
        var key = Self(name, kind, default: value, summary) { load, value, name throws(ConfigurationError) in
            load.configuration[keyPath: path] = try read(value, name, load)
        }
        key.current = { configuration in Self.documented(configuration[keyPath: path]) }
        return key
    }

    /// A value as the table's defaults are written: whole numbers without a fraction, durations
    /// in seconds, sets sorted and joined with commas; `nil` for a value that is not set.
    package static func documented(_ value: Any) -> String? {
        switch value {
        case let optional as any OptionalValue: optional.wrapped.flatMap(documented)
        case let duration as Duration:
            documented(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        case let number as Double:
            number.isFinite && abs(number) < 1e15 && number == number.rounded() ? String(Int(number)) : String(number)
        case let set as Set<Int>: set.sorted().map(String.init).joined(separator: ", ")
        case let word as any RawRepresentable where word.rawValue is String: word.rawValue as? String
        default: String(describing: value)
        }
    }

    static func text(_ name: String, _ path: Path<String?>, default value: String, _ summary: String) -> Self {
        typed(name, .string, path, default: value, summary) { value, name, load throws(ConfigurationError) in try value.text(name, load) }
    }

    static func integer(
        _ name: String, _ path: Path<Int>, default value: String, range: ClosedRange<Int>? = nil, allowed: String? = nil,
        _ summary: String
    ) -> Self {
        var key = typed(name, .integer, path, default: value, summary) { value, name, load throws(ConfigurationError) in
            try value.wholeNumber(name, load)
        }
        key.bound = range.map { Bound.within($0, path) }.map { bound in allowed.map(bound.saying) ?? bound }
        return key
    }

    static func optionalInteger(
        _ name: String, _ path: Path<Int?>, default value: String, range: ClosedRange<Int>? = nil, _ summary: String
    ) -> Self {
        var key = typed(name, .integer, path, default: value, summary) { value, name, load throws(ConfigurationError) in
            try value.wholeNumber(name, load)
        }
        key.bound = range.map { Bound.within($0, path) }
        return key
    }

    static func number(
        _ name: String, _ path: Path<Double>, default value: String, range: ClosedRange<Double>? = nil, aboveLower: Bool = false,
        _ summary: String
    ) -> Self {
        var key = typed(name, .number, path, default: value, summary) { value, name, load throws(ConfigurationError) in
            try value.number(name, load)
        }
        key.bound = range.map { Bound.within($0, aboveLower: aboveLower, path) }
        return key
    }

    static func seconds(
        _ name: String, _ path: Path<Duration>, default value: String, range: ClosedRange<Duration>? = nil, aboveLower: Bool = false,
        allowed: String? = nil, _ summary: String
    ) -> Self {
        var key = typed(name, .seconds, path, default: value, summary) { value, name, load throws(ConfigurationError) in
            try value.seconds(name, load)
        }
        key.bound = range.map { Bound.within($0, aboveLower: aboveLower, path) }.map { bound in allowed.map(bound.saying) ?? bound }
        return key
    }

    static func optionalSeconds(
        _ name: String, _ path: Path<Duration?>, default value: String, range: ClosedRange<Duration>? = nil, _ summary: String
    ) -> Self {
        var key = typed(name, .seconds, path, default: value, summary) { value, name, load throws(ConfigurationError) in
            try value.seconds(name, load)
        }
        key.bound = range.map { Bound.within($0, path) }
        return key
    }

    package static func flag(_ name: String, _ path: Path<Bool>, default value: String, _ summary: String) -> Self {
        typed(name, .bool, path, default: value, summary) { value, name, load throws(ConfigurationError) in try value.flag(name, load) }
    }

    /// A key whose value is one of an enum's lower-case raw values (compared without case).
    static func choice<Value: RawRepresentable & CaseIterable & SendableMetatype>(
        _ name: String, _ path: Path<Value>, default value: String, _ summary: String
    ) -> Self where Value.RawValue == String {
        let words = Value.allCases.map(\.rawValue)
        return typed(name, .choice(words), path, default: value, summary) { value, name, load throws(ConfigurationError) in
            let text = try value.text(name, load)
            guard let chosen = Value(rawValue: text.lowercased()) else {
                throw load.error(name, text, allowed: words.joined(separator: ", "))
            }
            return chosen
        }
    }

    static func statuses(_ name: String, _ path: Path<Set<Int>>, default value: String, _ summary: String) -> Self {
        Self(name, .integers, default: value, summary) { load, value, _ throws(ConfigurationError) in
            guard case .list(let items) = value else { throw load.error(name, nil, allowed: "a list of whole numbers") }
            var statuses = Set<Int>()
            for item in items { statuses.insert(try item.wholeNumber(name, load)) }
            load.configuration[keyPath: path] = statuses
        }
    }

    /// A section that is off until a source names it: a file's object (even `{}`), or
    /// `<name>.enabled` from the environment or a reader.
    static func section<Section: DefaultConstructible & SendableMetatype>(_ name: String, _ path: Path<Section?>, _ summary: String) -> Self
    {
        Self(name, .section, default: "off", summary) { load, value, _ throws(ConfigurationError) in
            if try value.flag(name, load) {
                if load.configuration[keyPath: path] == nil { load.configuration[keyPath: path] = Section() }
            } else {
                load.configuration[keyPath: path] = nil
            }
        }
    }
}

/// A section's settings, made with their defaults when a source turns the section on.
package protocol DefaultConstructible {
    init()
}

extension RetryPolicy: DefaultConstructible {}
extension RequestQueue.Limits: DefaultConstructible {}
extension AdaptiveConcurrency: DefaultConstructible {}
extension CircuitBreakerPolicy: DefaultConstructible {}
extension HedgingPolicy: DefaultConstructible {}

extension Optional where Wrapped: DefaultConstructible {
    /// The section's settings, made with their defaults when it is off: a key inside a section
    /// turns the section on.
    package var orDefault: Wrapped {
        get { self ?? Wrapped() }
        set { self = newValue }
    }
}

extension ConfigurationValue {
    package func text(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> String {
        guard case .text(let text) = self else { throw load.error(key, describedValue, allowed: "a string") }
        return text
    }

    package func texts(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> [String] {
        guard case .list(let items) = self else { throw load.error(key, describedValue, allowed: "a list of strings") }
        var texts: [String] = []
        for item in items { texts.append(try item.text(key, load)) }
        return texts
    }

    package func flag(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> Bool {
        switch self {
        case .flag(let value): return value
        default: throw load.error(key, describedValue, allowed: "true or false")
        }
    }

    func number(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> Double {
        guard case .number(let number) = self, number.isFinite else { throw load.error(key, describedValue, allowed: "a number") }
        return number
    }

    /// Numbers are read as `Double` and must be whole.
    package func wholeNumber(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> Int {
        let number = try number(key, load)
        guard number == number.rounded(), abs(number) < 1e15 else { throw load.error(key, "\(number)", allowed: "a whole number") }
        return Int(number)
    }

    /// Seconds, fractions allowed (kept to the millisecond); each key's own range is checked by
    /// the configuration's `validate`.
    package func seconds(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> Duration {
        let seconds = try number(key, load)
        guard seconds >= 0, seconds <= 86_400 * 365 else { throw load.error(key, "\(seconds)", allowed: "a number of seconds, 0 or more") }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Header names and values: an object (a file), or `Name: value` entries (the environment, a reader).
    func headerPairs(_ key: String, _ load: ConfigurationLoad) throws(ConfigurationError) -> [(String, String)] {
        switch self {
        case .object(let fields):
            var pairs: [(String, String)] = []
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) { pairs.append((name, try value.text("\(key).\(name)", load))) }
            return pairs
        case .list:
            var pairs: [(String, String)] = []
            for line in try texts(key, load) {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                    throw load.error(key, nil, allowed: "entries of the form `Name: value`")
                }
                pairs.append(
                    (
                        line[..<colon].trimmingCharacters(in: .whitespaces),
                        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    ))
            }
            return pairs
        default:
            throw load.error(key, describedValue, allowed: "an object of header names and values")
        }
    }

    /// The value as an error shows it.
    var describedValue: String? {
        switch self {
        case .text(let text): text
        case .number(let number): "\(number)"
        case .flag(let flag): "\(flag)"
        case .list: "a list"
        case .object: "an object"
        case .null: "null"
        }
    }
}

extension HeaderRule {
    /// A rule from a configuration's object (`team`, `host`, `pathPrefix`, `headers`, `secret`).
    init(configuration value: ConfigurationValue, key: String, _ load: ConfigurationLoad) throws(ConfigurationError) {
        guard case .object(let given) = value else { throw load.error(key, value.describedValue, allowed: "an object") }
        let fields = given.filter { if case .null = $0.value { false } else { true } }
        let known = ["team", "host", "pathPrefix", "headers", "secret"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw load.error("\(key).\(unknown)", nil, allowed: "the keys " + known.joined(separator: ", "))
        }
        func text(_ name: String) throws(ConfigurationError) -> String? {
            try fields[name].map { value throws(ConfigurationError) in try value.text("\(key).\(name)", load) }
        }
        let headers = try (fields["headers"] ?? .object([:])).headerPairs("\(key).headers", load).map { name, text in
            (name, text == "{requestID}" ? HeaderRule.Value.requestID : .fixed(text))
        }
        let secret = try fields["secret"].map { value throws(ConfigurationError) in try value.flag("\(key).secret", load) } ?? false
        do {
            try self.init(
                team: try text("team"), host: try text("host"), pathPrefix: try text("pathPrefix"), headerList: headers, secret: secret)
        } catch {
            throw load.error(key, error.value, allowed: error.allowed)
        }
    }
}

/// An optional seen through `Any`, to read what it wraps.
protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    var wrapped: Any? { self.map { $0 as Any } }
}
