import Configuration
import Courier
import Foundation

extension ClientConfiguration {
    /// The source named in the errors of ``init(reader:defaults:)``.
    public static let readerSource = "swift-configuration"

    /// Reads a configuration from a swift-configuration `ConfigReader`: environment variables,
    /// JSON or YAML files, in-memory values, or any provider the service already uses.
    ///
    /// The keys are those of a configuration file (see `ClientConfiguration/applyingFile(at:)`),
    /// read relative to `reader`, with nested objects as dotted keys. Scope the reader to keep
    /// Courier's keys together: with `reader.scoped(to: "courier")` and an
    /// `EnvironmentVariablesProvider`, `COURIER_TRANSPORT` names the transport and
    /// `COURIER_TIMEOUTS_REQUEST` the request timeout.
    ///
    /// | key | type |
    /// | --- | --- |
    /// | `transport`, `baseURL`, `failureLogLevel`, `httpVersion` | string |
    /// | `timeouts.request`, `timeouts.connect`, `timeouts.stall` | seconds |
    /// | `maxResponseBytes`, `maxRedirects` | integer |
    /// | `secretHeaders` | string array |
    /// | `headers` | string array, each `Name: value` |
    /// | `headerRules` | string: the rules as JSON, as in a configuration file |
    /// | `retry.maxAttempts`, `retry.baseDelay`, `retry.maxDelay`, `retry.maxRetryAfter` | number |
    /// | `retry.statuses` | integer array |
    /// | `resilience.retryBudget.share`, `resilience.retryBudget.minPerSecond`, `resilience.retryBudget.window` | number |
    /// | `resilience.circuitBreaker.consecutiveFailures`, `.failureRatio`, `.minimumCalls`, `.window`, `.openDuration` | number |
    /// | `resilience.circuitBreaker.statuses` | integer array |
    /// | `resilience.circuitBreaker.enabled` | bool: the breaker with its defaults |
    /// | `resilience.hedging.percentile`, `.window`, `.minimumSamples`, `.maxExtraShare`, `.minimumDelayMs` | number |
    /// | `resilience.hedging.enabled` | bool: hedging with its defaults |
    /// | `resilience.deadlineHeader` | string |
    /// | `resilience.retriesUnsentRequests` | bool |
    /// | `metrics`, `queue.deduplicates`, `queue.shedsLateCalls` | bool |
    /// | `queue.maxConcurrent`, `queue.maxConcurrentPerHost`, `queue.maxWaiting` | integer |
    /// | `queue.adaptive.initialLimit`, `.minimumLimit`, `.latencyTolerance`, `.backoffRatio` | number |
    /// | `queue.adaptive.enabled` | bool: adaptive limits with their defaults |
    /// | `connections.maxTotal`, `connections.maxPerHost` | integer |
    /// | `tls.caFile`, `tls.caPEM`, `tls.clientCertificateFile`, `tls.clientKeyFile`, `tls.pinnedPublicKey` | string |
    /// | `cache.memoryBytes`, `cache.maxEntries`, `cache.maxBytes`, `cache.maxEntryBytes`, `cache.maxStale` | number |
    /// | `cache.directory`, `cache.policy` | string |
    ///
    /// A key the reader does not have keeps its value from `defaults`. The errors are those of a
    /// configuration file: a value of the wrong type or out of range fails with a
    /// `ConfigurationError` that names the key.
    /// - Parameters:
    ///   - reader: The reader, scoped to Courier's keys.
    ///   - defaults: The values set in code.
    /// - Throws: `ConfigurationError` naming the key.
    public init(reader: ConfigReader, defaults: ClientConfiguration = ClientConfiguration()) throws(ConfigurationError) {
        let document = try ReaderDocument(reader).object
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: document)
        } catch {
            throw ConfigurationError(key: "(reader)", value: nil, allowed: "values JSON can hold", source: Self.readerSource)
        }
        self = try defaults.applyingJSON(data, source: Self.readerSource)
        try validate(source: Self.readerSource)
    }
}

/// The values a reader has for Courier's keys, gathered as the object a configuration file holds,
/// so that one decoder checks both (the same keys, types, ranges and errors).
private struct ReaderDocument {
    private let reader: ConfigReader
    private(set) var object: [String: Any] = [:]

    init(_ reader: ConfigReader) throws(ConfigurationError) {
        self.reader = reader
        for key in ["transport", "baseURL", "failureLogLevel", "httpVersion"] {
            put(key, try string(key))
        }
        for key in ["maxResponseBytes", "maxRedirects"] {
            put(key, try number(key))
        }
        put("secretHeaders", try strings("secretHeaders"))
        if let lines = try strings("headers") {
            put("headers", try Self.headers(lines))
        }
        if let rules = try string("headerRules") {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(rules.utf8)), parsed is [Any] else {
                throw ConfigurationError(
                    key: "headerRules", value: rules, allowed: "a JSON array of rules, as in a configuration file",
                    source: ClientConfiguration.readerSource)
            }
            object["headerRules"] = parsed
        }
        put("metrics", try bool("metrics"))
        try nest("timeouts", [("request", .number), ("connect", .number), ("stall", .number)])
        try nest(
            "retry",
            [("maxAttempts", .number), ("baseDelay", .number), ("maxDelay", .number), ("maxRetryAfter", .number), ("statuses", .integers)])
        try nest(
            "queue",
            [
                ("maxConcurrent", .number), ("maxConcurrentPerHost", .number), ("maxWaiting", .number), ("deduplicates", .bool),
                ("shedsLateCalls", .bool),
            ])
        let adaptive = try values(
            "queue.adaptive",
            [("initialLimit", .number), ("minimumLimit", .number), ("latencyTolerance", .number), ("backoffRatio", .number)])
        let adaptiveEnabled = try bool("queue.adaptive.enabled") ?? false
        if !adaptive.isEmpty || adaptiveEnabled {
            var queue = object["queue"] as? [String: Any] ?? [:]
            queue["adaptive"] = adaptive
            object["queue"] = queue
        }
        try nest("connections", [("maxTotal", .number), ("maxPerHost", .number)])
        try nest(
            "cache",
            [
                ("memoryBytes", .number), ("maxEntries", .number), ("directory", .string), ("maxBytes", .number),
                ("maxEntryBytes", .number), ("policy", .string), ("maxStale", .number),
            ])
        var resilience: [String: Any] = [:]
        if let name = try string("resilience.deadlineHeader") { resilience["deadlineHeader"] = name }
        if let value = try bool("resilience.retriesUnsentRequests") { resilience["retriesUnsentRequests"] = value }
        let budget = try values("resilience.retryBudget", [("share", .number), ("minPerSecond", .number), ("window", .number)])
        if !budget.isEmpty { resilience["retryBudget"] = budget }
        let breaker = try values(
            "resilience.circuitBreaker",
            [
                ("consecutiveFailures", .number), ("failureRatio", .number), ("minimumCalls", .number), ("window", .number),
                ("openDuration", .number), ("statuses", .integers),
            ])
        // `resilience.circuitBreaker.enabled = true` turns the breaker on with its defaults (a reader
        // has no empty object to say so).
        let enabled = try bool("resilience.circuitBreaker.enabled") ?? false
        if !breaker.isEmpty || enabled { resilience["circuitBreaker"] = breaker }
        let hedging = try values(
            "resilience.hedging",
            [
                ("percentile", .number), ("window", .number), ("minimumSamples", .number), ("maxExtraShare", .number),
                ("minimumDelayMs", .number),
            ])
        let hedgingEnabled = try bool("resilience.hedging.enabled") ?? false
        if !hedging.isEmpty || hedgingEnabled { resilience["hedging"] = hedging }
        if !resilience.isEmpty { object["resilience"] = resilience }
        try nest(
            "tls",
            [
                ("caFile", .string), ("caPEM", .string), ("clientCertificateFile", .string), ("clientKeyFile", .string),
                ("pinnedPublicKey", .string),
            ])
    }

    /// The type a key's value is read as.
    private enum Kind {
        case string, number, bool, integers
    }

    private mutating func put(_ key: String, _ value: Any?) {
        if let value { object[key] = value }
    }

    /// A nested object of the values present under `key`, when any is.
    private mutating func nest(_ key: String, _ entries: [(String, Kind)]) throws(ConfigurationError) {
        let nested = try values(key, entries)
        if !nested.isEmpty { object[key] = nested }
    }

    /// The values present under the dotted `path`, by name.
    private func values(_ path: String, _ entries: [(String, Kind)]) throws(ConfigurationError) -> [String: Any] {
        var nested: [String: Any] = [:]
        for (name, kind) in entries {
            let path = path + "." + name
            let value: Any? =
                switch kind {
                case .string: try string(path)
                case .number: try number(path)
                case .bool: try bool(path)
                case .integers: try integers(path)
                }
            if let value { nested[name] = value }
        }
        return nested
    }

    // Each read returns `nil` for a key the reader does not have, and throws for one it has with
    // a value of another type: swift-configuration's optional reads return `nil` for both, so a
    // `nil` is asked again with the throwing read, whose error tells the two apart.

    private func string(_ key: String) throws(ConfigurationError) -> String? {
        if let value = reader.string(forKey: ConfigKey(key)) { return value }
        return try absent(key, "a string") { try reader.requiredString(forKey: ConfigKey(key)) }
    }

    private func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        if let value = reader.stringArray(forKey: ConfigKey(key)) { return value }
        return try absent(key, "an array of strings") { try reader.requiredStringArray(forKey: ConfigKey(key)) }
    }

    private func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        if let value = reader.bool(forKey: ConfigKey(key)) { return value }
        return try absent(key, "true or false") { try reader.requiredBool(forKey: ConfigKey(key)) }
    }

    /// A number, integer or not (a file's numbers are read as numbers too; ranges are checked later).
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

    /// `Name: value` lines as a header object.
    private static func headers(_ lines: [String]) throws(ConfigurationError) -> [String: String] {
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw ConfigurationError(
                    key: "headers", value: line, allowed: "entries of the form `Name: value`", source: ClientConfiguration.readerSource)
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }
}
