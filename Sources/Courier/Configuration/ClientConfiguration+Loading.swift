import Foundation
import Logging

extension ClientConfiguration {
    /// The environment variable that names the transport.
    public static var transportVariable: String { ConfigurationKey.transport.environmentVariable }
    /// The environment variable that names a JSON configuration file.
    public static let fileVariable = "COURIER_CONFIG"

    /// The keys a configuration file may contain at its top level (see ``ConfigurationKey/all``).
    public static var fileKeys: [String] {
        var seen = Set<String>()
        return ConfigurationKey.all.compactMap { key in
            let top = String(key.name.split(separator: ".")[0])
            return seen.insert(top).inserted ? top : nil
        }
    }

    /// Loads a configuration: `defaults` (set in code), then the JSON file named by
    /// `COURIER_CONFIG` if set, then each key's environment variable that is set
    /// (``applyingEnvironment(_:)``: `COURIER_TRANSPORT`, `COURIER_TIMEOUTS_REQUEST`, …). Later
    /// sources win, so operators can change a setting without a code change.
    ///
    /// - Parameters:
    ///   - environment: The environment; the process's by default.
    ///   - defaults: The values set in code.
    /// - Returns: The validated configuration.
    /// - Throws: ``ConfigurationError`` naming the key, for a malformed file or a value out of range.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        defaults: ClientConfiguration = ClientConfiguration()
    ) throws(ConfigurationError) -> ClientConfiguration {
        var configuration = defaults
        let file = environment[fileVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(
                    key: fileVariable, value: file, allowed: "the path of a readable JSON file", source: "environment")
            }
            configuration = try configuration.applying(json: data, source: file)
        }
        var fromEnvironment: [String: String] = [:]
        configuration = try configuration.applying(environment: environment, setKeys: &fromEnvironment)
        // Checked once, with every source applied; an error names the source of its key's value.
        do {
            try configuration.validate(source: file ?? "code")
        } catch {
            var error = error
            if let variable = fromEnvironment[error.key] {
                error.source = "environment"
                error.variable = variable
            }
            throw error
        }
        return configuration
    }

    /// Applies the environment's `COURIER_*` variables on top of this configuration: each key's
    /// ``ConfigurationKey/environmentVariable`` (`COURIER_TIMEOUTS_REQUEST`, and
    /// `COURIER_RETRY_ENABLED` for a section), read as its kind takes it (lists separated by
    /// commas, header rules as JSON). Variables that name no key are left alone; one that turns on
    /// a key of a wing this program does not link (`COURIER_COOKIES=true` without `CourierCookies`)
    /// is refused, naming the product.
    /// - Parameter environment: The environment.
    /// - Returns: The combined configuration.
    /// - Throws: ``ConfigurationError`` naming the key and the variable.
    public func applyingEnvironment(_ environment: [String: String]) throws(ConfigurationError) -> ClientConfiguration {
        var setKeys: [String: String] = [:]
        return try applying(environment: environment, setKeys: &setKeys)
    }

    /// ``applyingEnvironment(_:)``, telling which keys it set, by name, with their variables.
    private func applying(environment: [String: String], setKeys: inout [String: String]) throws(ConfigurationError)
        -> ClientConfiguration
    {
        var load = ConfigurationLoad(self, source: "environment")
        load.environment = environment
        try load.refuseUnlinkedWingKeys(in: environment)
        for key in ConfigurationKey.applicationOrder {
            let variable = key.environmentVariable
            guard let text = environment[variable] else { continue }
            load.variable = variable
            setKeys[key.name] = variable
            guard let value = ConfigurationValue(text: text, as: key.kind) else {
                throw load.error(key.name, key.mayHoldSecrets ? nil : text, allowed: "a value of kind \(key.kind.description)")
            }
            try key.apply(&load, value)
        }
        try load.finishWings()
        return load.configuration
    }

    /// Applies the JSON configuration file at `path` on top of this configuration.
    ///
    /// The file is an object with these keys, all optional:
    /// ```json
    /// { "transport": "urlsession", "baseURL": "https://api.example.com",
    ///   "timeouts": { "request": 30, "connect": 5 },
    ///   "maxResponseBytes": 1048576, "maxRedirects": 5,
    ///   "secretHeaders": ["X-Internal-Token"], "headers": { "X-Team": "payments" },
    ///   "headerRules": [ { "team": "payments", "host": "api.example.com", "pathPrefix": "/v1",
    ///                      "headers": { "X-Team": "payments", "X-Request-ID": "{requestID}" }, "secret": false } ],
    ///   "retry": { "maxAttempts": 3, "baseDelay": 0.1, "maxDelay": 5, "maxRetryAfter": 30,
    ///              "statuses": [408, 429, 500, 502, 503, 504] },
    ///   "resilience": { "retryBudget": { "share": 0.2, "minPerSecond": 10, "window": 10 }, "deadlineHeader": "X-Timeout-Ms",
    ///                   "circuitBreaker": { "consecutiveFailures": 5, "openDuration": 5 } },
    ///   "failureLogLevel": "notice", "metrics": true,
    ///   "queue": { "maxConcurrent": 16, "maxConcurrentPerHost": 6, "maxWaiting": 1000, "deduplicates": true, "shedsLateCalls": true,
    ///              "adaptive": { "initialLimit": 4, "minimumLimit": 1, "latencyTolerance": 2, "backoffRatio": 0.9 } },
    ///   "httpVersion": "2", "connections": { "maxTotal": 256, "maxPerHost": 8 },
    ///   "tls": { "caFile": "/etc/courier/ca.pem", "clientCertificateFile": "client.pem", "clientKeyFile": "client.key",
    ///            "pinnedPublicKey": "sha256//…" },
    ///   "cache": { "memoryBytes": 33554432, "maxEntries": 10000, "maxEntryBytes": 8388608,
    ///              "policy": "staleIfError", "maxStale": 300 } }
    /// ```
    /// Every key, its kind, its default and its meaning are listed in <doc:ConfigurationKeys>
    /// (generated from ``ConfigurationKey/all``). Timeouts and delays are in seconds. A section
    /// (`retry`, `queue`, `cache`, `resilience.circuitBreaker`, `resilience.hedging`,
    /// `queue.adaptive`) is on when the file names it, even as `{}`. A transport that cannot
    /// honour a transport setting refuses to start and names the key. Unknown keys are errors
    /// that name the nearest known key, so typos do not pass silently; malformed JSON is reported
    /// with its line and column.
    ///
    /// - Parameter path: The file's path.
    /// - Returns: The combined configuration (not yet range-checked; see ``validate(source:)``).
    /// - Throws: ``ConfigurationError`` naming the key or the file.
    public func applyingFile(at path: String) throws(ConfigurationError) -> ClientConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(
                key: Self.fileVariable, value: path, allowed: "the path of a readable JSON file", source: "environment")
        }
        return try applyingJSON(data, source: path)
    }

    /// Applies a JSON configuration document; see ``applyingFile(at:)`` for its keys.
    /// - Parameters:
    ///   - data: The JSON document.
    ///   - source: Where it came from, for errors.
    /// - Returns: The combined configuration.
    /// - Throws: ``ConfigurationError`` naming the key.
    public func applyingJSON(_ data: Data, source: String) throws(ConfigurationError) -> ClientConfiguration {
        let configuration = try applying(json: data, source: source)
        try configuration.validate(source: source)
        return configuration
    }

    /// ``applyingJSON(_:source:)`` without the range check (``load(environment:defaults:)`` checks
    /// once, after the environment).
    private func applying(json data: Data, source: String) throws(ConfigurationError) -> ClientConfiguration {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            var failure = ConfigurationError(key: "(file)", value: nil, allowed: "a JSON object", source: source)
            (failure.line, failure.column) = Self.position(of: error, in: data)
            throw failure
        }
        guard case .object(let fields)? = ConfigurationValue(json: object) else {
            throw ConfigurationError(key: "(file)", value: nil, allowed: "a JSON object at the top level", source: source)
        }
        var load = ConfigurationLoad(self, source: source)
        try load.apply(fields, under: "")
        try load.finishWings()
        return load.configuration
    }

    /// Applies values a source read key by key (the swift-configuration reader does), each section
    /// after the keys inside it (see ``ConfigurationKey/applicationOrder``).
    /// - Parameters:
    ///   - values: Each key with its value.
    ///   - source: Where they came from, for errors.
    /// - Returns: The combined configuration (not yet range-checked).
    public func applying(_ values: [(ConfigurationKey, ConfigurationValue)], source: String) throws(ConfigurationError)
        -> ClientConfiguration
    {
        var load = ConfigurationLoad(self, source: source)
        let given = Dictionary(values.map { ($0.0.name, $0.1) }, uniquingKeysWith: { $1 })
        for key in ConfigurationKey.applicationOrder {
            if let value = given[key.name] { try key.apply(&load, value) }
        }
        try load.finishWings()
        return load.configuration
    }

    /// The line and column (from 1) of a JSON parse error's offset (`around character N`).
    private static func position(of error: any Error, in data: Data) -> (Int?, Int?) {
        let text = "\(error)"
        guard let range = text.range(of: "character "),
            let offset = Int(text[range.upperBound...].prefix { $0.isNumber }), offset <= data.count
        else { return (nil, nil) }
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }
}

extension ConfigurationLoad {
    /// Applies a file's object: each field a key, a group (`timeouts`) or a section (`retry`);
    /// anything else is an unknown key, named with the nearest known one.
    mutating func apply(_ fields: [String: ConfigurationValue], under prefix: String) throws(ConfigurationError) {
        for (field, value) in fields.sorted(by: { $0.key < $1.key }) {
            if case .null = value { continue }  // `null` leaves a key as it was
            let name = prefix + field
            let key = ConfigurationKey.byName[name]
            if let key, key.kind != .section {
                try key.apply(&self, value)
                continue
            }
            if key == nil, let unlinked = ConfigurationKey.unlinkedByName[name] {
                if case .flag(false) = value { continue }  // turning off what is not linked is harmless
                throw unlinked.refusal(source: source)
            }
            // A section may also be `true` (on, with its defaults, as `{}`) or `false` (off).
            if let key, case .flag = value {
                try key.apply(&self, value)
                continue
            }
            guard key != nil || ConfigurationKey.groups.contains(name) else {
                var failure = error(name, nil, allowed: "one of the keys in ConfigurationKey.all")
                failure.suggestion = ConfigurationKey.suggestion(for: name)
                throw failure
            }
            guard case .object(let inner) = value else { throw error(name, value.describedValue, allowed: "an object") }
            try key?.apply(&self, .flag(true))
            try apply(inner, under: name + ".")
        }
    }

    /// Applies what each linked wing's keys of this source said together (``Wing/finishLoading(_:)``).
    mutating func finishWings() throws(ConfigurationError) {
        for wing in linkedWings { try wing.finishLoading(&self) }
    }
}
