#if SwiftConfiguration
    import Configuration
    import Courier
    import Foundation

    extension ClientConfiguration {
        /// The source named in the errors of ``init(reader:defaults:)``.
        public static let readerSource = "swift-configuration"

        /// Reads a configuration from a swift-configuration `ConfigReader`: environment variables,
        /// JSON or YAML files, in-memory values, or any provider the service already uses.
        ///
        /// The keys are Courier's configuration keys (`ConfigurationKey.all`, listed with their
        /// kinds and defaults in Courier's "Configuration keys" article), read relative to `reader` as
        /// dotted keys. A section (`retry`, `queue`, `cache`, `resilience.circuitBreaker`, …) is turned
        /// on by any key inside it or by `<section>.enabled`. Lists are string or integer arrays,
        /// `headers` is a string array of `Name: value` entries, and `headerRules` is the rules as
        /// JSON text, as in a configuration file. Scope the reader to keep Courier's keys together:
        /// with `reader.scoped(to: "courier")` and an `EnvironmentVariablesProvider`,
        /// `COURIER_TRANSPORT` names the transport and `COURIER_TIMEOUTS_REQUEST` the request timeout
        /// (each key's `environmentVariable`).
        ///
        /// A key the reader does not have keeps its value from `defaults`. A value of the wrong type
        /// or out of range fails with a `ConfigurationError` that names the key, and so does a key of
        /// a wing the program does not link (`cookies` without `CourierCookies`:
        /// `ConfigurationKey.unlinked`), unless its value is `false`.
        /// - Parameters:
        ///   - reader: The reader, scoped to Courier's keys.
        ///   - defaults: The values set in code.
        /// - Throws: `ConfigurationError` naming the key.
        public init(reader: ConfigReader, defaults: ClientConfiguration = ClientConfiguration()) throws(ConfigurationError) {
            var values: [(ConfigurationKey, ConfigurationValue)] = []
            let read = KeyReader(reader: reader)
            for key in ConfigurationKey.all {
                // A section is also on when any key inside it is given.
                if let value = try read.value(of: key) { values.append((key, value)) }
            }
            for key in ConfigurationKey.unlinked where read.turnsOn(key.readerKey) {
                throw key.refusal(source: Self.readerSource)
            }
            self = try defaults.applying(values, source: Self.readerSource)
            try validate(source: Self.readerSource)
        }
    }

    /// Reads each key as its kind takes it.
    private struct KeyReader {
        let reader: ConfigReader

        /// Whether the reader gives `name` a value other than `false`, of whatever type.
        func turnsOn(_ name: String) -> Bool {
            let key = ConfigKey(name)
            if let flag = reader.bool(forKey: key) { return flag }
            if let text = reader.string(forKey: key) { return !ConfigurationKey.Unlinked.turnsOff(text) }
            return reader.int(forKey: key) != nil || reader.double(forKey: key) != nil || reader.stringArray(forKey: key) != nil
        }

        func value(of key: ConfigurationKey) throws(ConfigurationError) -> ConfigurationValue? {
            let name = key.readerKey
            switch key.kind {
            case .string, .choice:
                return try string(name, isSecret: key.mayHoldSecrets).map(ConfigurationValue.text)
            case .integer, .number, .seconds, .milliseconds:
                return try number(name).map(ConfigurationValue.number)
            case .bool, .section:
                return try bool(name).map(ConfigurationValue.flag)
            case .strings, .headers:
                return try strings(name).map { .list($0.map(ConfigurationValue.text)) }
            case .integers:
                return try integers(name).map { .list($0.map { .number(Double($0)) }) }
            case .headerRules:
                guard let text = try string(name) else { return nil }
                guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), parsed is [Any],
                    let value = ConfigurationValue(json: parsed)
                else {
                    throw ConfigurationError(
                        key: key.name, value: text, allowed: "a JSON array of rules, as in a configuration file",
                        source: ClientConfiguration.readerSource)
                }
                return value
            }
        }

        // Each read returns `nil` for a key the reader does not have, and throws for one it has with
        // a value of another type: swift-configuration's optional reads return `nil` for both, so a
        // `nil` is asked again with the throwing read, whose error tells the two apart.

        /// - Parameter isSecret: Whether the value may hold a secret (the proxy's password), so the
        ///   reader's access reporters never show it.
        private func string(_ key: String, isSecret: Bool = false) throws(ConfigurationError) -> String? {
            if let value = reader.string(forKey: ConfigKey(key), isSecret: isSecret) { return value }
            return try absent(key, "a string") { try reader.requiredString(forKey: ConfigKey(key), isSecret: isSecret) }
        }

        private func strings(_ key: String) throws(ConfigurationError) -> [String]? {
            if let value = reader.stringArray(forKey: ConfigKey(key)) { return value }
            return try absent(key, "an array of strings") { try reader.requiredStringArray(forKey: ConfigKey(key)) }
        }

        private func bool(_ key: String) throws(ConfigurationError) -> Bool? {
            if let value = reader.bool(forKey: ConfigKey(key)) { return value }
            return try absent(key, "true or false") { try reader.requiredBool(forKey: ConfigKey(key)) }
        }

        /// A number, integer or not (ranges are checked later).
        private func number(_ key: String) throws(ConfigurationError) -> Double? {
            if let value = reader.int(forKey: ConfigKey(key)) { return Double(value) }
            if let value = reader.double(forKey: ConfigKey(key)) { return value }
            return try absent(key, "a number") { try reader.requiredDouble(forKey: ConfigKey(key)) }
        }

        private func integers(_ key: String) throws(ConfigurationError) -> [Int]? {
            if let value = reader.intArray(forKey: ConfigKey(key)) { return value }
            return try absent(key, "an array of integers") { try reader.requiredIntArray(forKey: ConfigKey(key)) }
        }

        /// `nil` when the reader has no value for `key`; otherwise the error for a value of the wrong type.
        private func absent<T>(_ key: String, _ expected: String, _ read: () throws -> T) throws(ConfigurationError) -> T? {
            do {
                return try read()
            } catch {
                if "\(error)".hasPrefix("Missing required config value") { return nil }
                throw ConfigurationError(key: key, value: nil, allowed: expected, source: ClientConfiguration.readerSource)
            }
        }
    }
#endif
