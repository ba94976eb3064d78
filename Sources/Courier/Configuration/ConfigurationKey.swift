import Foundation

/// One configuration key: its dotted name, the kind of value it takes, its default and its meaning.
///
/// Every key is declared once, in ``ConfigurationKey/all``. That one declaration drives the JSON
/// file loader (``ClientConfiguration/applyingJSON(_:source:)``), the environment
/// (``ClientConfiguration/applyingEnvironment(_:)``, with ``environmentVariable``), the
/// swift-configuration reader in `CourierConfiguration`, the key list in the documentation, and
/// the errors, which name the key (and the variable a value came from).
public struct ConfigurationKey: Sendable {
    /// Whether a value of this key may hold a secret (header values, the proxy's password), so
    /// errors never show it.
    public var mayHoldSecrets: Bool { kind == .headers || kind == .headerRules || name == ConfigurationKey.proxy.name }

    /// The keys to apply from one source, each section after the keys inside it, so that a
    /// section turned off stays off whatever else the source sets in it.
    public static var applicationOrder: [ConfigurationKey] {
        all.filter { $0.kind != .section } + all.filter { $0.kind == .section }
    }

    /// The key as a configuration file nests it, with dots: `queue.shedsLateCalls`.
    public let name: String
    /// The kind of value it takes.
    public let kind: Kind
    /// The default, as the documentation states it.
    public let defaultValue: String
    /// What the key sets, in one sentence.
    public let summary: String
    /// The key's value in a configuration, as the documentation writes a default (`nil` for a key
    /// that is not one typed value, or not set): `ConfigurationKeysTests` checks that the
    /// documented defaults are the real ones.
    package var current: (@Sendable (ClientConfiguration) -> String?)? = nil
    /// The values the key allows, when it has a range (``Bound``).
    package var bound: Bound? = nil
    /// Sets the key's value on a configuration being loaded (given the key's name, for errors).
    let set: @Sendable (inout ConfigurationLoad, ConfigurationValue, String) throws(ConfigurationError) -> Void

    /// Sets the key's value on a configuration being loaded; `null` leaves it as it was.
    func apply(_ load: inout ConfigurationLoad, _ value: ConfigurationValue) throws(ConfigurationError) {
        if case .null = value { return }
        try set(&load, value, name)
    }

    /// The kinds of values keys take.
    public enum Kind: Sendable, Equatable {
        /// Text.
        case string
        /// One of the listed words (compared without case).
        case choice([String])
        /// A whole number.
        case integer
        /// A number.
        case number
        /// A number of seconds (fractions allowed).
        case seconds
        /// A whole number of milliseconds.
        case milliseconds
        /// `true` or `false`.
        case bool
        /// A list of text.
        case strings
        /// A list of whole numbers.
        case integers
        /// Header names and values: an object in a file, `Name: value` entries elsewhere.
        case headers
        /// Header rules: an array of objects in a file, the same array as JSON text elsewhere.
        case headerRules
        /// A section that a file turns on with an object (even `{}`), and the environment and
        /// the reader with `<name>.enabled`.
        case section

        /// How the documentation names the kind.
        public var description: String {
            switch self {
            case .string: "string"
            case .choice(let words): words.joined(separator: " \\| ")
            case .integer: "integer"
            case .number: "number"
            case .seconds: "seconds"
            case .milliseconds: "milliseconds"
            case .bool: "bool"
            case .strings: "string list"
            case .integers: "integer list"
            case .headers: "headers"
            case .headerRules: "header rules (JSON)"
            case .section: "section"
            }
        }
    }

    /// The environment variable that sets the key: `COURIER_` and the name in upper snake case,
    /// the rule swift-configuration's environment provider follows for a reader scoped to
    /// `courier` (`queue.shedsLateCalls` is `COURIER_QUEUE_SHEDS_LATE_CALLS`; a section's is
    /// its `…_ENABLED`).
    public var environmentVariable: String {
        Self.environmentName(kind == .section ? name + ".enabled" : name)
    }

    /// The key a swift-configuration reader is asked for (`<name>.enabled` for a section).
    public var readerKey: String { kind == .section ? name + ".enabled" : name }

    static func environmentName(_ key: String) -> String {
        var result = "COURIER_"
        var previous: Character?
        for character in key {
            if character == "." {
                result.append("_")
            } else {
                if let previous, previous.isLowercase || previous.isNumber, character.isUppercase { result.append("_") }
                result.append(contentsOf: character.uppercased())
            }
            previous = character == "." ? nil : character
        }
        return result
    }
}

/// A value as a source gave it, before its key reads it.
///
/// A configuration source outside Courier (the swift-configuration reader in
/// `CourierConfiguration`) reads each key as its ``ConfigurationKey/kind`` says and hands the values
/// to ``ClientConfiguration/applying(_:source:)``.
public enum ConfigurationValue: Sendable {
    /// Text.
    case text(String)
    /// A number.
    case number(Double)
    /// A boolean.
    case flag(Bool)
    /// A list.
    case list([ConfigurationValue])
    /// An object (a section, a header map, a header rule).
    case object([String: ConfigurationValue])
    /// An explicit null.
    case null

    /// A value from `JSONSerialization`'s output: strings, numbers, booleans, arrays, dictionaries
    /// with string keys and `NSNull` (or a boxed `nil`); `nil` for anything else (never a silent
    /// null). Booleans are
    /// told from numbers by the number's type, as `JSONSerialization` makes them: an `NSNumber`
    /// made from an `Int8` reads as a boolean too.
    public init?(json: Any) {
        switch json {
        case let text as String: self = .text(text)
        case let number as NSNumber:
            self = String(cString: number.objCType) == "c" ? .flag(number.boolValue) : .number(number.doubleValue)
        case let list as [Any]:
            var values: [ConfigurationValue] = []
            values.reserveCapacity(list.count)
            for item in list {
                guard let value = ConfigurationValue(json: item) else { return nil }
                values.append(value)
            }
            self = .list(values)
        case let object as [String: Any]:
            var values: [String: ConfigurationValue] = [:]
            for (key, item) in object {
                guard let value = ConfigurationValue(json: item) else { return nil }
                values[key] = value
            }
            self = .object(values)
        case is NSNull: self = .null
        default:
            // A boxed optional, as a dictionary literal with `nil` values makes: `nil` is a null,
            // a value is read as itself.
            let mirror = Mirror(reflecting: json)
            guard mirror.displayStyle == .optional else { return nil }
            guard let wrapped = mirror.children.first?.value else {
                self = .null
                return
            }
            guard let value = ConfigurationValue(json: wrapped) else { return nil }
            self = value
        }
    }

    /// A value from text (an environment variable), read as `kind` takes it.
    init?(text: String, as kind: ConfigurationKey.Kind) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let items = trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        switch kind {
        case .string, .choice: self = .text(text)
        case .integer, .number, .seconds, .milliseconds:
            guard let number = Double(trimmed) else { return nil }
            self = .number(number)
        case .bool, .section:
            switch trimmed.lowercased() {
            case "true", "1", "yes": self = .flag(true)
            case "false", "0", "no": self = .flag(false)
            default: return nil
            }
        case .headers where trimmed.hasPrefix("{"):
            // Header values may hold commas: a JSON object of names and values says so.
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)), parsed is [String: Any],
                let value = ConfigurationValue(json: parsed)
            else { return nil }
            self = value
        case .strings, .headers: self = .list(items.filter { !$0.isEmpty }.map(ConfigurationValue.text))
        case .integers:
            var numbers: [ConfigurationValue] = []
            for item in items where !item.isEmpty {
                guard let number = Double(item) else { return nil }
                numbers.append(.number(number))
            }
            self = .list(numbers)
        case .headerRules:
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let value = ConfigurationValue(json: parsed)
            else { return nil }
            self = value
        }
    }
}

/// A configuration being loaded from one source: the values so far, what the wings' keys read (a
/// response cache still to be built from its `cache.*` keys), and where the value being applied
/// came from.
package struct ConfigurationLoad {
    package var configuration: ClientConfiguration
    /// The source, for errors: a file's path, `environment`, `swift-configuration`.
    let source: String
    /// The environment variable of the value being applied, if it came from one.
    var variable: String?
    /// The environment `proxy: environment` reads: the one being loaded, or else the process's.
    var environment: [String: String]?
    /// What the wings' keys read so far from this source, for their ``Wing/finishLoading(_:)``.
    package var wings = WingLoadState()

    init(_ configuration: ClientConfiguration, source: String) {
        self.configuration = configuration
        self.source = source
    }

    /// The error for `key`'s value, from this source.
    package func error(_ key: String, _ value: String?, allowed: String) -> ConfigurationError {
        var error = ConfigurationError(key: key, value: value, allowed: allowed, source: source)
        error.variable = variable
        return error
    }
}

extension ConfigurationKey {
    /// The keys by name, and every group of keys (`timeouts`, `resilience.retryBudget`) a file
    /// may hold as an object.
    static let byName: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    static let groups: Set<String> = Set(
        all.flatMap { key in
            let parts = key.name.split(separator: ".")
            return (1..<max(1, parts.count)).map { parts[..<$0].joined(separator: ".") }
        })

    /// The nearest known key to `name`, for a "did you mean": a key within two edits, or the
    /// same last part under another group (`maxAttempts` for `retry.maxAttempts`).
    static func suggestion(for name: String) -> String? {
        let candidates = all.map(\.name) + groups
        let lowered = name.lowercased()
        let close = candidates.map { ($0, editDistance(lowered, $0.lowercased())) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }
        if let close { return close.0 }
        let last = name.split(separator: ".").last.map(String.init)?.lowercased()
        return candidates.first { $0.split(separator: ".").last.map(String.init)?.lowercased() == last }
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The keys as a Markdown table (name, environment variable, kind, default, meaning): the
    /// list in the documentation, generated from ``all`` (see `ConfigurationKeys.md`).
    public static var markdownTable: String {
        var lines = [
            "| key | environment variable | value | allowed | default | what it sets |", "| --- | --- | --- | --- | --- | --- |",
        ]
        for key in all {
            lines.append(
                "| `\(key.name)` | `\(key.environmentVariable)` | \(key.kind.description) | \(key.bound?.allowed ?? "") | "
                    + "\(key.defaultValue) | \(key.summary) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
