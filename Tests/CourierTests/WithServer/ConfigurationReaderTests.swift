import Configuration
import Courier
import CourierCache
import CourierConfiguration
import CourierCookies
import Foundation
import Logging
import Testing

@Suite("ClientConfiguration from a swift-configuration reader")
struct ConfigurationReaderTests {
    @Test("every key is read from an in-memory provider")
    func everyKey() throws {
        let provider = InMemoryProvider(values: [
            "courier.transport": "curl",
            "courier.baseURL": "https://api.test",
            "courier.failureLogLevel": "warning",
            "courier.httpVersion": "2",
            "courier.timeouts.request": 2.5,
            "courier.timeouts.connect": 1,
            "courier.timeouts.stall": 4,
            "courier.maxResponseBytes": 4096,
            "courier.maxRedirects": 3,
            "courier.secretHeaders": ConfigValue(.stringArray(["X-Key"]), isSecret: false),
            "courier.headers": ConfigValue(.stringArray(["X-Team: payments", "Accept: application/json"]), isSecret: false),
            "courier.headerRules": #"[{"team":"payments","host":"api.test","headers":{"X-Cost-Centre":"42"}}]"#,
            "courier.metrics": false,
            "courier.retry.maxAttempts": 5,
            "courier.retry.baseDelay": 0.2,
            "courier.retry.maxDelay": 3,
            "courier.retry.maxRetryAfter": 10,
            "courier.retry.statuses": ConfigValue(.intArray([503, 429]), isSecret: false),
            "courier.resilience.retryBudget.share": 0.1,
            "courier.resilience.retryBudget.minPerSecond": 4,
            "courier.resilience.retryBudget.window": 20,
            "courier.resilience.circuitBreaker.consecutiveFailures": 3,
            "courier.resilience.circuitBreaker.openDuration": 2,
            "courier.resilience.deadlineHeader": "X-Timeout-Ms",
            "courier.queue.maxConcurrent": 8,
            "courier.queue.maxConcurrentPerHost": 2,
            "courier.queue.maxWaiting": 50,
            "courier.queue.deduplicates": false,
            "courier.connections.maxTotal": 32,
            "courier.connections.maxPerHost": 4,
            "courier.tls.caFile": "/etc/hostname",
            "courier.tls.pinnedPublicKey": "sha256//RjGONrTSIIKbmCXMZVkAuHeLkGKEkQLvBvbUMKswM4Q=",
            "courier.cache.memoryBytes": 2048,
            "courier.cache.maxEntries": 7,
            "courier.cache.maxEntryBytes": 512,
            "courier.cache.policy": "staleIfError",
            "courier.cache.maxStale": 45,
        ])
        let configuration = try ClientConfiguration(reader: ConfigReader(provider: provider).scoped(to: "courier"))
        #expect(configuration.transport == "curl")
        #expect(configuration.baseURL == "https://api.test")
        #expect(configuration.failureLogLevel == .warning)
        #expect(configuration.httpVersion == .http2)
        #expect(configuration.requestTimeout == .milliseconds(2500))
        #expect(configuration.connectTimeout == .seconds(1))
        #expect(configuration.stallTimeout == .seconds(4))
        #expect(configuration.maxResponseBytes == 4096)
        #expect(configuration.maxRedirects == 3)
        #expect(configuration.secretHeaderNames == ["x-key"])
        #expect(configuration.defaultHeaders["x-team"] == "payments")
        #expect(configuration.defaultHeaders["accept"] == "application/json")
        #expect(configuration.headerRules.count == 1)
        #expect(!configuration.exportsMetrics)
        #expect(configuration.retry?.maxAttempts == 5)
        #expect(configuration.retry?.baseDelay == .milliseconds(200))
        #expect(configuration.retry?.maxDelay == .seconds(3))
        #expect(configuration.retry?.maxRetryAfter == .seconds(10))
        #expect(configuration.retry?.retryableStatuses == [503, 429])
        #expect(configuration.resilience.retryBudget.share == 0.1)
        #expect(configuration.resilience.retryBudget.minPerSecond == 4)
        #expect(configuration.resilience.retryBudget.window == .seconds(20))
        #expect(configuration.resilience.circuitBreaker?.consecutiveFailures == 3)
        #expect(configuration.resilience.circuitBreaker?.openDuration == .seconds(2))
        #expect(configuration.resilience.circuitBreaker?.failureRatio == 0.5, "the rest keep their defaults")
        #expect(configuration.resilience.deadlineHeader == "X-Timeout-Ms")
        #expect(configuration.queue?.maxConcurrent == 8)
        #expect(configuration.queue?.maxConcurrentPerHost == 2)
        #expect(configuration.queue?.maxWaiting == 50)
        #expect(configuration.queue?.deduplicates == false)
        #expect(configuration.maxConnections == 32)
        #expect(configuration.maxConnectionsPerHost == 4)
        #expect(configuration.tls.setKeys == ["tls.caFile", "tls.pinnedPublicKey"])
        #expect((configuration.cache?.store as? MemoryCacheStore)?.maxBytes == 2048)
        #expect((configuration.cache?.store as? MemoryCacheStore)?.maxEntries == 7)
        #expect(configuration.cache?.maxEntryBytes == 512)
        #expect(configuration.cachePolicy == .staleIfError(maxStale: .seconds(45)))
    }

    @Test("environment variables, scoped: COURIER_TRANSPORT, COURIER_TIMEOUTS_REQUEST, lists split at commas")
    func environment() throws {
        let provider = EnvironmentVariablesProvider(environmentVariables: [
            "COURIER_TRANSPORT": "mock", "COURIER_BASE_URL": "https://env.test", "COURIER_TIMEOUTS_REQUEST": "7",
            "COURIER_SECRET_HEADERS": "X-A,X-B", "COURIER_RETRY_STATUSES": "500,503", "COURIER_METRICS": "false",
            "UNRELATED": "ignored",
        ])
        let configuration = try ClientConfiguration(reader: ConfigReader(provider: provider).scoped(to: "courier"))
        #expect(configuration.transport == "mock")
        #expect(configuration.baseURL == "https://env.test")
        #expect(configuration.requestTimeout == .seconds(7))
        #expect(configuration.secretHeaderNames == ["x-a", "x-b"])
        #expect(configuration.retry?.retryableStatuses == [500, 503])
        #expect(!configuration.exportsMetrics)
    }

    @Test("a JSON file through FileProvider gives what the same file gives through COURIER_CONFIG")
    func jsonFile() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-reader-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(
            #"{"courier":{"transport":"mock","baseURL":"https://file.test","timeouts":{"request":3},"maxRedirects":2,"retry":{"maxAttempts":4}}}"#
                .utf8
        ).write(to: url)
        // (The path through a reader, as a service reads it: `FilePath` needs swift-system's module.)
        let provider = try await FileProvider<JSONSnapshot>(
            config: ConfigReader(provider: InMemoryProvider(values: ["filePath": ConfigValue(.string(url.path), isSecret: false)])))
        let configuration = try ClientConfiguration(reader: ConfigReader(provider: provider).scoped(to: "courier"))
        #expect(configuration.transport == "mock")
        #expect(configuration.baseURL == "https://file.test")
        #expect(configuration.requestTimeout == .seconds(3))
        #expect(configuration.maxRedirects == 2)
        #expect(configuration.retry?.maxAttempts == 4)
    }

    @Test("resilience.circuitBreaker.enabled turns the breaker on with its defaults; without it there is none")
    func breakerEnabled() throws {
        let on = ConfigReader(provider: InMemoryProvider(values: ["resilience.circuitBreaker.enabled": true]))
        #expect(try ClientConfiguration(reader: on).resilience.circuitBreaker == CircuitBreakerPolicy())
        let off = ConfigReader(provider: InMemoryProvider(values: ["resilience.circuitBreaker.enabled": false]))
        #expect(try ClientConfiguration(reader: off).resilience.circuitBreaker == nil)
        let bad = ConfigReader(provider: InMemoryProvider(values: ["resilience.circuitBreaker.failureRatio": 2.0]))
        let error = #expect(throws: ConfigurationError.self) { try ClientConfiguration(reader: bad) }
        #expect(error?.key == "resilience.circuitBreaker.failureRatio")
    }

    @Test("hedging and adaptive queue limits from a reader: enabled takes the defaults, values name their key")
    func hedgingAndAdaptive() throws {
        let on = ConfigReader(
            provider: InMemoryProvider(values: ["resilience.hedging.enabled": true, "queue.adaptive.initialLimit": 3]))
        let configuration = try ClientConfiguration(reader: on)
        #expect(configuration.resilience.hedging == HedgingPolicy())
        #expect(configuration.queue?.adaptive?.initialLimit == 3)
        let bad = ConfigReader(provider: InMemoryProvider(values: ["resilience.hedging.percentile": 0.1]))
        let error = #expect(throws: ConfigurationError.self) { try ClientConfiguration(reader: bad) }
        #expect(error?.key == "resilience.hedging.percentile")
    }

    @Test("keys the reader lacks keep the values set in code")
    func defaultsStay() throws {
        var defaults = ClientConfiguration(baseURL: "https://code.test", transport: "mock")
        defaults.maxRedirects = 4
        let reader = ConfigReader(provider: InMemoryProvider(values: ["maxResponseBytes": 100]))
        let configuration = try ClientConfiguration(reader: reader, defaults: defaults)
        #expect(configuration.baseURL == "https://code.test")
        #expect(configuration.transport == "mock")
        #expect(configuration.maxRedirects == 4)
        #expect(configuration.maxResponseBytes == 100)
    }

    @Test(
        "a wrong type, a value out of range or a malformed entry fails with the key named",
        arguments: [
            ("timeouts.request", ConfigValue(.string("soon"), isSecret: false)),
            ("maxRedirects", ConfigValue(.int(-1), isSecret: false)),
            ("metrics", ConfigValue(.string("maybe"), isSecret: false)),
            ("headers", ConfigValue(.stringArray(["no colon here"]), isSecret: false)),
            ("headerRules", ConfigValue(.string("{not json"), isSecret: false)),
            ("retry.statuses", ConfigValue(.stringArray(["five hundred"]), isSecret: false)),
            ("httpVersion", ConfigValue(.string("3"), isSecret: false)),
            ("failureLogLevel", ConfigValue(.string("loud"), isSecret: false)),
        ])
    func errorsNameTheKey(key: String, value: ConfigValue) throws {
        let reader = ConfigReader(provider: InMemoryProvider(values: [AbsoluteConfigKey(ConfigKey(key)): value]))
        let error = #expect(throws: ConfigurationError.self) { try ClientConfiguration(reader: reader) }
        #expect(error?.key == key, "\(String(describing: error))")
    }

    /// A valid value, not the default, for every key: a new key without one fails the test below.
    static let samples: [String: String] = [
        "transport": "mock", "baseURL": "https://env.test", "timeouts.request": "7", "timeouts.connect": "4", "timeouts.stall": "9",
        "maxResponseBytes": "4096", "responseHead.maxFields": "50", "responseHead.maxBytes": "4096",
        "responseHead.maxInterimResponses": "3", "decompression.maxRatio": "50", "decompression.maxCodings": "1", "maxRedirects": "3",
        "secretHeaders": "X-A,X-B", "headers": "X-Team: pay", "json.dates": "iso8601", "json.keys": "snake-case",
        "headerRules": #"[{"team": "pay", "headers": {"X-Id": "{requestID}"}}]"#, "failureLogLevel": "error", "metrics": "false",
        "httpVersion": "1.1", "connections.maxTotal": "20", "connections.maxPerHost": "3",
        "connections.unixSocket": "",
        "connections.addresses": "", "tls.caFile": "",
        "tls.caPEM": "-----BEGIN CERTIFICATE-----x", "tls.clientCertificateFile": "", "tls.clientKeyFile": "",
        "tls.pinnedPublicKey": "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "noProxy": "a.test,10.0.0.0/8",
        "proxy": "http://u:p@proxy.test:3128", "cookies": "true", "cookieSuffixes": "*.tenants.acme.test", "retry": "true",
        "retry.maxAttempts": "5",
        "retry.baseDelay": "0.2", "retry.maxDelay": "6", "retry.maxRetryAfter": "9", "retry.statuses": "500,503", "queue": "true",
        "queue.maxConcurrent": "12", "queue.maxConcurrentPerHost": "5", "queue.maxWaiting": "99", "queue.deduplicates": "false",
        "queue.shedsLateCalls": "false", "queue.adaptive": "true", "queue.adaptive.initialLimit": "3", "queue.adaptive.minimumLimit": "2",
        "queue.adaptive.latencyTolerance": "3", "queue.adaptive.backoffRatio": "0.8", "cache": "true", "cache.memoryBytes": "1000",
        "cache.maxEntries": "10", "cache.directory": "", "cache.maxBytes": "", "cache.maxEntryBytes": "100", "cache.policy": "staleIfError",
        "cache.maxStale": "40", "resilience.retryBudget.share": "0.3", "resilience.retryBudget.minPerSecond": "3",
        "resilience.retryBudget.window": "20", "resilience.circuitBreaker": "true", "resilience.circuitBreaker.consecutiveFailures": "7",
        "resilience.circuitBreaker.failureRatio": "0.6", "resilience.circuitBreaker.minimumCalls": "30",
        "resilience.circuitBreaker.window": "40", "resilience.circuitBreaker.openDuration": "2",
        "resilience.circuitBreaker.statuses": "500", "resilience.hedging": "true", "resilience.hedging.percentile": "0.9",
        "resilience.hedging.window": "50", "resilience.hedging.minimumSamples": "15", "resilience.hedging.maxExtraShare": "0.1",
        "resilience.hedging.minimumDelayMs": "7", "resilience.deadlineHeader": "X-Left-Ms", "resilience.retriesUnsentRequests": "false",
    ]

    @Test("every key's environment variable is the name swift-configuration's environment provider reads for it")
    func environmentNamesAgree() throws {
        // Keys whose sample is empty need a file (tls) or exclude each other (cache's disk store;
        // the connection overrides and the proxy, whose names the environment tests check).
        var environment: [String: String] = [:]
        for key in ConfigurationKey.all {
            let sample = try #require(Self.samples[key.name], "no sample value for \(key.name)")
            if !sample.isEmpty { environment[key.environmentVariable] = sample }
        }
        let fromEnvironment = try ClientConfiguration.load(environment: environment)
        let provider = EnvironmentVariablesProvider(environmentVariables: environment)
        let fromReader = try ClientConfiguration(reader: ConfigReader(provider: provider).scoped(to: "courier"))
        #expect(fromReader.cache?.maxEntryBytes == 100 && fromEnvironment.cache?.maxEntryBytes == 100)
        #expect(Self.dump(fromReader) == Self.dump(fromEnvironment))
        #expect(Self.dump(fromEnvironment) != Self.dump(ClientConfiguration()))
        #expect(fromEnvironment.retry?.maxAttempts == 5 && fromEnvironment.queue?.adaptive?.backoffRatio == 0.8)
        #expect(fromEnvironment.resilience.hedging?.minimumDelay == .milliseconds(7))
        #expect(fromEnvironment.resilience.circuitBreaker?.openDuration == .seconds(2))
    }

    /// Every field of a configuration, the cache's store aside (each load makes its own).
    static func dump(_ configuration: ClientConfiguration) -> String {
        var copy = configuration
        copy.cache = nil
        var text = ""
        Swift.dump(copy, to: &text)
        return text.replacing(/0x[0-9a-f]+/, with: "")
    }
}
