import Foundation
import Logging

extension ClientConfiguration {
    /// The environment variable that names the transport.
    public static let transportVariable = "COURIER_TRANSPORT"
    /// The environment variable that names a JSON configuration file.
    public static let fileVariable = "COURIER_CONFIG"

    /// The keys a configuration file may contain.
    public static let fileKeys = [
        "transport", "baseURL", "timeouts", "maxResponseBytes", "maxRedirects", "secretHeaders", "headers", "headerRules", "retry",
        "failureLogLevel", "metrics", "queue", "httpVersion", "connections", "tls", "cache", "resilience",
    ]

    /// Loads a configuration: `defaults` (set in code), then the JSON file named by
    /// `COURIER_CONFIG` if set, then `COURIER_TRANSPORT` if set. Later sources win, so operators
    /// can switch the transport without a code change.
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
        if let path = environment[fileVariable], !path.isEmpty {
            configuration = try configuration.applyingFile(at: path)
        }
        if let name = environment[transportVariable] {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else {
                throw ConfigurationError(
                    key: transportVariable, value: name, allowed: TransportRegistry.knownNames.joined(separator: ", "),
                    source: "environment")
            }
            configuration.transport = trimmed.lowercased()
        }
        try configuration.validate(source: environment[fileVariable] ?? "code")
        return configuration
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
    /// `cache` turns the response cache on (``ResponseCache``): in memory (`memoryBytes`,
    /// `maxEntries`; 64 MiB and 10,000 by default), or on disk with `directory` and `maxBytes`
    /// (256 MiB by default); `"cache": {}` is a memory cache with the defaults. `policy` is
    /// `useProtocol` (the default), `reloadIgnoringCache`, `revalidateAlways`,
    /// `returnCacheElseLoad`, `cacheOnly` or `staleIfError` (with `maxStale` seconds, 300 by default).
    /// `resilience` holds ``Resilience``: `retryBudget` caps the retries a host receives
    /// (``RetryBudget``: `share` of its calls plus `minPerSecond` over `window` seconds), and
    /// `circuitBreaker` turns the breaker on (``CircuitBreakerPolicy``: `consecutiveFailures`,
    /// `failureRatio`, `minimumCalls`, `window`, `openDuration`, `statuses`; `{}` takes the defaults);
    /// `deadlineHeader` names a header that carries the time left, in milliseconds, on every attempt.
    /// `timeouts` also takes `stall` (seconds without a received byte). `httpVersion` is `1.1`,
    /// `2` or `2-prior-knowledge`. A transport that cannot honour a transport setting refuses to
    /// start and names the key.
    /// Timeouts and delays are in seconds. `queue` gives the client a default ``RequestQueue``. A header rule value `{requestID}` is the call's request
    /// id. Unknown keys are errors, so typos do not pass silently.
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
        // Key names are checked on the untyped object so that a typo is reported by name;
        // values are read through Codable so a wrong type names its key path.
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ConfigurationError(key: "(file)", value: nil, allowed: "a JSON object at the top level", source: source)
        }
        for key in object.keys.sorted() where !Self.fileKeys.contains(key) {
            throw ConfigurationError(
                key: key, value: nil, allowed: "one of the keys " + Self.fileKeys.joined(separator: ", "), source: source)
        }
        try Self.checkKeys(object["timeouts"], allowed: ["request", "connect", "stall"], prefix: "timeouts", source: source)
        try Self.checkKeys(object["connections"], allowed: ["maxTotal", "maxPerHost"], prefix: "connections", source: source)
        try Self.checkKeys(
            object["tls"], allowed: ["caFile", "caPEM", "clientCertificateFile", "clientKeyFile", "pinnedPublicKey"], prefix: "tls",
            source: source)
        try Self.checkKeys(
            object["retry"], allowed: ["maxAttempts", "baseDelay", "maxDelay", "maxRetryAfter", "statuses"], prefix: "retry", source: source
        )
        try Self.checkKeys(
            object["resilience"], allowed: ["retryBudget", "circuitBreaker", "deadlineHeader", "hedging", "retriesUnsentRequests"],
            prefix: "resilience",
            source: source)
        let resilience = object["resilience"] as? [String: Any]
        try Self.checkKeys(
            resilience?["retryBudget"], allowed: ["share", "minPerSecond", "window"], prefix: "resilience.retryBudget", source: source)
        try Self.checkKeys(
            resilience?["circuitBreaker"],
            allowed: ["consecutiveFailures", "failureRatio", "minimumCalls", "window", "openDuration", "statuses"],
            prefix: "resilience.circuitBreaker", source: source)
        try Self.checkKeys(
            resilience?["hedging"], allowed: ["percentile", "window", "minimumSamples", "maxExtraShare", "minimumDelayMs"],
            prefix: "resilience.hedging", source: source)
        try Self.checkKeys(
            object["queue"],
            allowed: ["maxConcurrent", "maxConcurrentPerHost", "maxWaiting", "deduplicates", "shedsLateCalls", "adaptive"],
            prefix: "queue",
            source: source)
        try Self.checkKeys(
            (object["queue"] as? [String: Any])?["adaptive"],
            allowed: ["initialLimit", "minimumLimit", "latencyTolerance", "backoffRatio"], prefix: "queue.adaptive", source: source)
        try Self.checkKeys(
            object["cache"], allowed: ["memoryBytes", "maxEntries", "directory", "maxBytes", "maxEntryBytes", "policy", "maxStale"],
            prefix: "cache", source: source)
        for (index, rule) in ((object["headerRules"] as? [Any]) ?? []).enumerated() {
            try Self.checkKeys(
                rule, allowed: ["team", "host", "pathPrefix", "headers", "secret"], prefix: "headerRules.\(index)", source: source)
        }
        let file: ConfigurationFile
        do {
            file = try JSONDecoder().decode(ConfigurationFile.self, from: data)
        } catch let DecodingError.typeMismatch(type, context) {
            throw ConfigurationError(key: Self.keyPath(context.codingPath), value: nil, allowed: "a value of type \(type)", source: source)
        } catch let DecodingError.valueNotFound(type, context) {
            throw ConfigurationError(
                key: Self.keyPath(context.codingPath), value: "null", allowed: "a value of type \(type)", source: source)
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw ConfigurationError(
                key: Self.keyPath(context.codingPath), value: nil, allowed: "a value of the documented type", source: source)
        } catch {
            throw ConfigurationError(key: "(file)", value: nil, allowed: "a JSON object: \(error)", source: source)
        }

        var configuration = self
        if let name = file.transport { configuration.transport = name.lowercased() }
        if let base = file.baseURL { configuration.baseURL = base }
        if let seconds = file.timeouts?.request {
            configuration.requestTimeout = try Self.duration(seconds: seconds, key: "timeouts.request", source: source)
        }
        if let seconds = file.timeouts?.connect {
            configuration.connectTimeout = try Self.duration(seconds: seconds, key: "timeouts.connect", source: source)
        }
        if let seconds = file.timeouts?.stall {
            configuration.stallTimeout = try Self.duration(seconds: seconds, key: "timeouts.stall", source: source)
        }
        if let name = file.httpVersion {
            let versions: [String: HTTPVersionPreference] = ["1.1": .http1_1, "2": .http2, "2-prior-knowledge": .http2PriorKnowledge]
            guard let version = versions[name.lowercased()] else {
                throw ConfigurationError(key: "httpVersion", value: name, allowed: "1.1, 2 or 2-prior-knowledge", source: source)
            }
            configuration.httpVersion = version
        }
        if let value = file.connections?.maxTotal {
            configuration.maxConnections = try Self.wholeNumber(value, key: "connections.maxTotal", source: source)
        }
        if let value = file.connections?.maxPerHost {
            configuration.maxConnectionsPerHost = try Self.wholeNumber(value, key: "connections.maxPerHost", source: source)
        }
        if let tls = file.tls {
            if let value = tls.caFile { configuration.tls.caFile = value }
            if let value = tls.caPEM { configuration.tls.caPEM = value }
            if let value = tls.clientCertificateFile { configuration.tls.clientCertificateFile = value }
            if let value = tls.clientKeyFile { configuration.tls.clientKeyFile = value }
            if let value = tls.pinnedPublicKey { configuration.tls.pinnedPublicKey = value }
        }
        if let bytes = file.maxResponseBytes {
            configuration.maxResponseBytes = try Self.wholeNumber(bytes, key: "maxResponseBytes", source: source)
        }
        if let redirects = file.maxRedirects {
            configuration.maxRedirects = try Self.wholeNumber(redirects, key: "maxRedirects", source: source)
        }
        if let names = file.secretHeaders { configuration.secretHeaderNames.formUnion(names.map { $0.lowercased() }) }
        for (name, value) in (file.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                _ = try HeaderValidation.field(name: name, value: value)
            } catch {
                throw ConfigurationError(
                    key: "headers.\(name)", value: nil, allowed: "a valid header name and a value without control characters",
                    source: source)
            }
            configuration.defaultHeaders.add(name, value)
        }
        for (index, rule) in (file.headerRules ?? []).enumerated() {
            let headers = (rule.headers ?? [:]).sorted { $0.key < $1.key }.map { name, value -> (String, HeaderRule.Value) in
                (name, value == "{requestID}" ? .requestID : .fixed(value))
            }
            do {
                configuration.headerRules.append(
                    try HeaderRule(
                        team: rule.team, host: rule.host, pathPrefix: rule.pathPrefix, headerList: headers, secret: rule.secret ?? false))
            } catch {
                throw ConfigurationError(key: "headerRules.\(index)", value: error.value, allowed: error.allowed, source: source)
            }
        }
        if let retry = file.retry {
            var policy = configuration.retry ?? RetryPolicy()
            if let attempts = retry.maxAttempts {
                policy.maxAttempts = try Self.wholeNumber(attempts, key: "retry.maxAttempts", source: source)
            }
            if let seconds = retry.baseDelay {
                policy.baseDelay = try Self.duration(seconds: seconds, key: "retry.baseDelay", source: source)
            }
            if let seconds = retry.maxDelay { policy.maxDelay = try Self.duration(seconds: seconds, key: "retry.maxDelay", source: source) }
            if let seconds = retry.maxRetryAfter {
                policy.maxRetryAfter = try Self.duration(seconds: seconds, key: "retry.maxRetryAfter", source: source)
            }
            if let statuses = retry.statuses {
                policy.retryableStatuses = Set(
                    try statuses.map { value throws(ConfigurationError) in
                        try Self.wholeNumber(value, key: "retry.statuses", source: source)
                    })
            }
            configuration.retry = policy
        }
        if let name = file.failureLogLevel {
            guard let level = Logger.Level(rawValue: name.lowercased()) else {
                throw ConfigurationError(
                    key: "failureLogLevel", value: name, allowed: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "),
                    source: source)
            }
            configuration.failureLogLevel = level
        }
        if let metrics = file.metrics { configuration.exportsMetrics = metrics }
        if let queue = file.queue {
            var limits = configuration.queue ?? RequestQueue.Limits()
            if let value = queue.maxConcurrent {
                limits.maxConcurrent = try Self.wholeNumber(value, key: "queue.maxConcurrent", source: source)
            }
            if let value = queue.maxConcurrentPerHost {
                limits.maxConcurrentPerHost = try Self.wholeNumber(value, key: "queue.maxConcurrentPerHost", source: source)
            }
            if let value = queue.maxWaiting {
                limits.maxWaiting = try Self.wholeNumber(value, key: "queue.maxWaiting", source: source)
            }
            if let value = queue.deduplicates { limits.deduplicates = value }
            if let value = queue.shedsLateCalls { limits.shedsLateCalls = value }
            if let adaptive = queue.adaptive {
                var policy = limits.adaptive ?? AdaptiveConcurrency()
                if let value = adaptive.initialLimit {
                    policy.initialLimit = try Self.wholeNumber(value, key: "queue.adaptive.initialLimit", source: source)
                }
                if let value = adaptive.minimumLimit {
                    policy.minimumLimit = try Self.wholeNumber(value, key: "queue.adaptive.minimumLimit", source: source)
                }
                if let value = adaptive.latencyTolerance { policy.latencyTolerance = value }
                if let value = adaptive.backoffRatio { policy.backoffRatio = value }
                limits.adaptive = policy
            }
            configuration.queue = limits
        }
        if let cache = file.cache { try configuration.applyCache(cache, source: source) }
        if let resilience = file.resilience { try configuration.applyResilience(resilience, source: source) }
        try configuration.validate(source: source)
        return configuration
    }

    /// The `cache` object: the store, its bounds, and the default policy.
    private mutating func applyCache(_ cache: ConfigurationFile.Cache, source: String) throws(ConfigurationError) {
        func bytes(_ value: Double?, _ key: String, default fallback: Int) throws(ConfigurationError) -> Int {
            guard let value else { return fallback }
            let count = try Self.wholeNumber(value, key: "cache.\(key)", source: source)
            guard count > 0 else {
                throw ConfigurationError(key: "cache.\(key)", value: "\(count)", allowed: "more than 0", source: source)
            }
            return count
        }
        let maxEntryBytes = try cache.maxEntryBytes.map { value throws(ConfigurationError) in
            try bytes(value, "maxEntryBytes", default: 0)
        }
        let store: any CacheStore
        if let directory = cache.directory {
            guard cache.memoryBytes == nil, cache.maxEntries == nil else {
                throw ConfigurationError(
                    key: "cache.directory", value: directory, allowed: "either directory (with maxBytes) or memoryBytes, not both",
                    source: source)
            }
            do {
                store = try DiskCacheStore(directory: directory, maxBytes: try bytes(cache.maxBytes, "maxBytes", default: 256 << 20))
            } catch {
                throw ConfigurationError(key: error.key, value: error.value, allowed: error.allowed, source: source)
            }
        } else {
            guard cache.maxBytes == nil else {
                throw ConfigurationError(key: "cache.maxBytes", value: nil, allowed: "only with cache.directory", source: source)
            }
            store = MemoryCacheStore(
                maxBytes: try bytes(cache.memoryBytes, "memoryBytes", default: 64 << 20),
                maxEntries: try bytes(cache.maxEntries, "maxEntries", default: 10_000))
        }
        self.cache = maxEntryBytes.map { ResponseCache(store: store, maxEntryBytes: $0) } ?? ResponseCache(store: store)
        let policies: [String: CachePolicy] = [
            "useprotocol": .useProtocol, "reloadignoringcache": .reloadIgnoringCache, "revalidatealways": .revalidateAlways,
            "returncacheelseload": .returnCacheElseLoad, "cacheonly": .cacheOnly,
        ]
        if let name = cache.policy {
            if name.lowercased() == "staleiferror" {
                cachePolicy = .staleIfError(
                    maxStale: try Self.duration(seconds: cache.maxStale ?? 300, key: "cache.maxStale", source: source))
            } else if let policy = policies[name.lowercased()] {
                cachePolicy = policy
            } else {
                throw ConfigurationError(
                    key: "cache.policy", value: name,
                    allowed: "useProtocol, reloadIgnoringCache, revalidateAlways, returnCacheElseLoad, cacheOnly or staleIfError",
                    source: source)
            }
        }
        if cache.maxStale != nil, cache.policy?.lowercased() != "staleiferror" {
            throw ConfigurationError(key: "cache.maxStale", value: nil, allowed: "only with cache.policy staleIfError", source: source)
        }
    }

    /// Refuses unknown keys inside a nested object, naming them (`retry.maxAtempts`).
    private static func checkKeys(_ value: Any?, allowed: [String], prefix: String, source: String) throws(ConfigurationError) {
        guard let object = value as? [String: Any] else { return }
        for key in object.keys.sorted() where !allowed.contains(key) {
            throw ConfigurationError(
                key: "\(prefix).\(key)", value: nil, allowed: "the keys " + allowed.joined(separator: ", "), source: source)
        }
    }

    private static func keyPath(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    /// Numbers are read as `Double` (Foundation reports a fractional value given for an `Int`
    /// without naming the key) and checked here.
    static func wholeNumber(_ value: Double, key: String, source: String) throws(ConfigurationError) -> Int {
        guard value.isFinite, value == value.rounded(), abs(value) < 1e15 else {
            throw ConfigurationError(key: key, value: "\(value)", allowed: "a whole number", source: source)
        }
        return Int(value)
    }

    static func duration(seconds: Double, key: String, source: String) throws(ConfigurationError) -> Duration {
        guard seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw ConfigurationError(key: key, value: "\(seconds)", allowed: "a number of seconds above 0", source: source)
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// The shape of a configuration file.
private struct ConfigurationFile: Decodable {
    struct Timeouts: Decodable {
        var request: Double?
        var connect: Double?
        var stall: Double?
    }

    struct Connections: Decodable {
        var maxTotal: Double?
        var maxPerHost: Double?
    }

    struct TLS: Decodable {
        var caFile: String?
        var caPEM: String?
        var clientCertificateFile: String?
        var clientKeyFile: String?
        var pinnedPublicKey: String?
    }

    var transport: String?
    var baseURL: String?
    var timeouts: Timeouts?
    var maxResponseBytes: Double?
    var maxRedirects: Double?
    var secretHeaders: [String]?
    var headers: [String: String]?
    var headerRules: [Rule]?
    var retry: Retry?
    var failureLogLevel: String?
    var metrics: Bool?
    var queue: Queue?
    var httpVersion: String?
    var connections: Connections?
    var tls: TLS?
    var cache: Cache?
    var resilience: ResilienceFile?

    struct Cache: Decodable {
        var memoryBytes: Double?
        var maxEntries: Double?
        var directory: String?
        var maxBytes: Double?
        var maxEntryBytes: Double?
        var policy: String?
        var maxStale: Double?
    }

    struct Queue: Decodable {
        var maxConcurrent: Double?
        var maxConcurrentPerHost: Double?
        var maxWaiting: Double?
        var deduplicates: Bool?
        var shedsLateCalls: Bool?
        var adaptive: Adaptive?

        struct Adaptive: Decodable {
            var initialLimit: Double?
            var minimumLimit: Double?
            var latencyTolerance: Double?
            var backoffRatio: Double?
        }
    }

    struct Rule: Decodable {
        var team: String?
        var host: String?
        var pathPrefix: String?
        var headers: [String: String]?
        var secret: Bool?
    }

    struct Retry: Decodable {
        var maxAttempts: Double?
        var baseDelay: Double?
        var maxDelay: Double?
        var maxRetryAfter: Double?
        var statuses: [Double]?
    }
}
