import Foundation
import Logging

// The one table of configuration keys. Adding a key is one entry here (and, for a new setting,
// its property on the configuration); the loaders, the reader, the docs and the errors follow.

extension ConfigurationKey {
    /// Every key, in the order the documentation lists them: the kernel's, then those of each wing
    /// linked into this program (the cookie jar's with `CourierCookies`).
    public static let all: [ConfigurationKey] = kernel + linkedWings.flatMap { $0.keys }

    /// The kernel's keys.
    private static let kernel: [ConfigurationKey] = [
        transport, baseURL, timeoutsRequest, timeoutsConnect, timeoutsStall, maxResponseBytes, responseHeadMaxFields,
        responseHeadMaxBytes, responseHeadMaxInterimResponses, decompressionMaxRatio, decompressionMaxCodings, maxRedirects,
        secretHeaders, headers, jsonDates, jsonKeys,
        headerRules, failureLogLevel, metrics, httpVersion, connectionsMaxTotal, connectionsMaxPerHost, connectionsUnixSocket,
        connectionsAddresses, tlsCAFile, tlsCAPEM,
        tlsClientCertificateFile, tlsClientKeyFile, tlsPinnedPublicKey, proxyNoProxy, proxy, retry,
        retryMaxAttempts,
        retryBaseDelay,
        retryMaxDelay,
        retryMaxRetryAfter, retryStatuses, queue, queueMaxConcurrent, queueMaxConcurrentPerHost, queueMaxWaiting, queueDeduplicates,
        queueShedsLateCalls, queueAdaptive, adaptiveInitialLimit, adaptiveMinimumLimit, adaptiveLatencyTolerance, adaptiveBackoffRatio,
        budgetShare, budgetMinPerSecond, budgetWindow, breaker, breakerConsecutiveFailures, breakerFailureRatio, breakerMinimumCalls,
        breakerWindow, breakerOpenDuration, breakerStatuses, hedging, hedgingPercentile, hedgingWindow, hedgingMinimumSamples,
        hedgingMaxExtraShare, hedgingMinimumDelay, deadlineHeader, retriesUnsentRequests,
    ]

    // MARK: The client

    public static let transport = ConfigurationKey(
        "transport", .string, default: "the preferred linked one", "The transport's registered name (`curl`, `ahc`, `urlsession`, `mock`)."
    ) { load, value, name throws(ConfigurationError) in
        let transport = try value.text(name, load).trimmingCharacters(in: .whitespaces)
        guard !transport.isEmpty else { throw load.error(name, "", allowed: TransportRegistry.knownNames.joined(separator: ", ")) }
        load.configuration.transport = transport.lowercased()
    }
    public static let baseURL = text("baseURL", \.baseURL, default: "none", "The URL calls are relative to.")
    public static let timeoutsRequest = seconds(
        "timeouts.request", \.requestTimeout, default: "60", range: ClientConfiguration.requestTimeoutRange, "Each call's deadline.")
    public static let timeoutsConnect = seconds(
        "timeouts.connect", \.connectTimeout, default: "10", range: ClientConfiguration.connectTimeoutRange,
        "The longest a transport may take to connect.")
    public static let timeoutsStall = optionalSeconds(
        "timeouts.stall", \.stallTimeout, default: "30", range: ClientConfiguration.stallTimeoutRange,
        "How long a transfer may receive nothing (downloads' and event streams' bodies included).")
    public static let maxResponseBytes = integer(
        "maxResponseBytes", \.maxResponseBytes, default: "16777216", range: ClientConfiguration.maxResponseBytesRange,
        "The largest response body a call accepts.")
    public static let responseHeadMaxFields = integer(
        "responseHead.maxFields", \.responseHeadLimits.maxFields, default: "100", range: ResponseHeadLimits.maxFieldsRange,
        "The most fields a response head may have.")
    public static let responseHeadMaxBytes = integer(
        "responseHead.maxBytes", \.responseHeadLimits.maxBytes, default: "65536", range: ResponseHeadLimits.maxBytesRange,
        "The most bytes of fields a response head may have.")
    public static let responseHeadMaxInterimResponses = integer(
        "responseHead.maxInterimResponses", \.responseHeadLimits.maxInterimResponses, default: "10",
        range: ResponseHeadLimits.maxInterimResponsesRange, "The most `1xx` answers before the final one.")
    public static let decompressionMaxRatio = integer(
        "decompression.maxRatio", \.decompression.maxRatio, default: "100", range: Decompression.maxRatioRange,
        "How many times the bytes received a decoded body may grow.")
    public static let decompressionMaxCodings = integer(
        "decompression.maxCodings", \.decompression.maxCodings, default: "2", range: Decompression.maxCodingsRange,
        "The most content codings one body may chain.")
    public static let maxRedirects = integer(
        "maxRedirects", \.maxRedirects, default: "10", range: ClientConfiguration.maxRedirectsRange, "The most redirects a call follows.")
    public static let secretHeaders = ConfigurationKey(
        "secretHeaders", .strings, default: "none", "More header names that carry credentials (added to the standard ones)."
    ) { load, value, name throws(ConfigurationError) in
        load.configuration.secretHeaderNames.formUnion(try value.texts(name, load).map { $0.lowercased() })
    }
    public static let headers = ConfigurationKey(
        "headers", .headers, default: "none", "Headers every call sends (a call's own of the same name win)."
    ) { load, value, name throws(ConfigurationError) in
        for (header, text) in try value.headerPairs(name, load) {
            do {
                _ = try HeaderValidation.field(name: header, value: text)
            } catch {
                throw load.error("\(name).\(header)", nil, allowed: "a valid header name and a value without control characters")
            }
            // A later source replaces a header of the same name.
            load.configuration.defaultHeaders.replace(header, text)
        }
    }
    public static let jsonDates = choice(
        "json.dates", \.json.dates, default: "deferred", "How the client's JSON writes and reads dates (`iso8601` also reads fractions).")
    public static let jsonKeys = choice(
        "json.keys", \.json.keys, default: "as-is",
        "How the client's JSON names keys (`snake-case`: `camelCase` properties, `snake_case` keys).")
    public static let headerRules = ConfigurationKey(
        "headerRules", .headerRules, default: "none",
        "Team header rules: `team`, `host`, `pathPrefix`, `headers` (`{requestID}` is the call's id), `secret`."
    ) { load, value, name throws(ConfigurationError) in
        guard case .list(let rules) = value else { throw load.error(name, nil, allowed: "an array of rules") }
        for (index, rule) in rules.enumerated() {
            load.configuration.headerRules.append(try HeaderRule(configuration: rule, key: "\(name).\(index)", load))
        }
    }
    public static let failureLogLevel = ConfigurationKey(
        "failureLogLevel", .choice(Logger.Level.allCases.map(\.rawValue)), default: "warning", "The level failed calls are logged at."
    ) { load, value, name throws(ConfigurationError) in
        let text = try value.text(name, load)
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw load.error(name, text, allowed: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
        load.configuration.failureLogLevel = level
    }
    public static let metrics = flag("metrics", \.exportsMetrics, default: "true", "Whether calls are exported as swift-metrics.")
    public static let httpVersion = ConfigurationKey(
        "httpVersion", .choice(["1.1", "2", "2-prior-knowledge"]), default: "the transport's", "The HTTP version calls ask for."
    ) { load, value, name throws(ConfigurationError) in
        let text = try value.text(name, load)
        let versions: [String: HTTPVersionPreference] = ["1.1": .http1_1, "2": .http2, "2-prior-knowledge": .http2PriorKnowledge]
        guard let version = versions[text.lowercased()] else {
            throw load.error(name, text, allowed: "1.1, 2 or 2-prior-knowledge")
        }
        load.configuration.httpVersion = version
    }
    public static let connectionsMaxTotal = optionalInteger(
        "connections.maxTotal", \.maxConnections, default: "the transport's", range: ClientConfiguration.connectionLimitRange,
        "The most connections open at once.")
    public static let connectionsMaxPerHost = optionalInteger(
        "connections.maxPerHost", \.maxConnectionsPerHost, default: "the transport's", range: ClientConfiguration.connectionLimitRange,
        "The most connections to one host.")
    public static let connectionsUnixSocket = text(
        "connections.unixSocket", \.connectionOverrides.unixSocket, default: "none",
        "A Unix socket every call connects to (the URL's host stays in `Host`).")
    public static let connectionsAddresses = ConfigurationKey(
        "connections.addresses", .strings, default: "none",
        "`host=address` entries: calls to the host connect to the address instead (`Host` and TLS name kept)."
    ) { load, value, name throws(ConfigurationError) in
        let entries = try value.texts(name, load).flatMap { $0.split(separator: ",").map(String.init) }
        do throws(ConfigurationError) {
            load.configuration.connectionOverrides.addresses = try ConnectionOverrides.addresses(
                from: entries, key: name, source: load.source)
        } catch {
            throw load.error(name, error.value, allowed: error.allowed)
        }
    }
    public static let tlsCAFile = text("tls.caFile", \.tls.caFile, default: "none", "A PEM file of roots to trust besides the system's.")
    public static let tlsCAPEM = text("tls.caPEM", \.tls.caPEM, default: "none", "PEM roots to trust besides the system's.")
    public static let tlsClientCertificateFile = text(
        "tls.clientCertificateFile", \.tls.clientCertificateFile, default: "none", "A PEM client certificate to present.")
    public static let tlsClientKeyFile = text("tls.clientKeyFile", \.tls.clientKeyFile, default: "none", "The client certificate's key.")
    public static let tlsPinnedPublicKey = text(
        "tls.pinnedPublicKey", \.tls.pinnedPublicKey, default: "none", "The server's key pin, `sha256//<base64>` (`;` between several).")

    // MARK: Proxy

    public static let proxyNoProxy = ConfigurationKey(
        "noProxy", .strings, default: "none",
        "Servers reached without the proxy: `*`, domains (`.example.com`), IP addresses, CIDR networks."
    ) { load, value, name throws(ConfigurationError) in
        let entries = try value.texts(name, load).flatMap { $0.split(separator: ",").map(String.init) }
        do throws(ConfigurationError) {
            load.configuration.proxy.noProxy = try ProxyExclusion.list(entries, key: name, source: load.source)
        } catch {
            throw load.error(name, error.value, allowed: error.allowed)
        }
    }
    public static let proxy = ConfigurationKey(
        "proxy", .string, default: "none",
        "The forward proxy: `none`, `environment` (`http_proxy`, `https_proxy`, `no_proxy`) or `http://[user:password@]host:port`."
    ) { load, value, name throws(ConfigurationError) in
        let text = try value.text(name, load).trimmingCharacters(in: .whitespaces)
        var proxy = load.configuration.proxy
        do throws(ConfigurationError) {
            switch text.lowercased() {
            case "none", "":
                proxy.httpProxy = nil
                proxy.httpsProxy = nil
            case "environment":
                let found = try ProxyConfiguration.environment(load.environment ?? ProcessInfo.processInfo.environment)
                proxy.httpProxy = found.httpProxy
                proxy.httpsProxy = found.httpsProxy
                proxy.noProxy += found.noProxy
            default:
                let server = try ProxyServer(url: text, key: name, source: load.source)
                proxy.httpProxy = server
                proxy.httpsProxy = server
            }
        } catch {
            // An environment variable the proxy was read from is named by the error itself.
            throw error.variable != nil ? error : load.error(name, error.value, allowed: error.allowed)
        }
        load.configuration.proxy = proxy
    }

    // MARK: Retry

    public static let retry = section("retry", \.retry, "Retries failed idempotent calls (see `RetryPolicy`).")
    public static let retryMaxAttempts = integer(
        "retry.maxAttempts", \.retry.orDefault.maxAttempts, default: "3", range: RetryPolicy.maxAttemptsRange,
        "Attempts per call, the first included.")
    public static let retryBaseDelay = seconds(
        "retry.baseDelay", \.retry.orDefault.baseDelay, default: "0.1", range: .zero ... .seconds(60), aboveLower: true,
        "The first backoff's ceiling.")
    public static let retryMaxDelay = seconds(
        "retry.maxDelay", \.retry.orDefault.maxDelay, default: "5", range: .zero ... .seconds(300), allowed: "baseDelay to 300 seconds",
        "The largest backoff.")
    public static let retryMaxRetryAfter = seconds(
        "retry.maxRetryAfter", \.retry.orDefault.maxRetryAfter, default: "30", range: .zero ... .seconds(3600),
        "The longest `Retry-After` honoured.")
    public static let retryStatuses = statuses(
        "retry.statuses", \.retry.orDefault.retryableStatuses, default: "408, 429, 500, 502, 503, 504", "The statuses retried.")

    // MARK: Queue

    public static let queue = section("queue", \.queue, "Gives the client a default `RequestQueue`.")
    public static let queueMaxConcurrent = integer(
        "queue.maxConcurrent", \.queue.orDefault.maxConcurrent, default: "16", range: RequestQueue.Limits.concurrencyRange,
        "Calls running at once, all hosts.")
    public static let queueMaxConcurrentPerHost = integer(
        "queue.maxConcurrentPerHost", \.queue.orDefault.maxConcurrentPerHost, default: "6", range: RequestQueue.Limits.concurrencyRange,
        "Calls running at once per host.")
    public static let queueMaxWaiting = integer(
        "queue.maxWaiting", \.queue.orDefault.maxWaiting, default: "1000", range: RequestQueue.Limits.waitingRange,
        "Calls waiting; more fail as `queue_full`.")
    public static let queueDeduplicates = flag(
        "queue.deduplicates", \.queue.orDefault.deduplicates, default: "true", "Whether identical calls share one transfer.")
    public static let queueShedsLateCalls = flag(
        "queue.shedsLateCalls", \.queue.orDefault.shedsLateCalls, default: "true",
        "Whether a call that cannot start before its deadline fails at once.")
    public static let queueAdaptive = section(
        "queue.adaptive", \.queue.orDefault.adaptive, "Adapts each host's limit to its latency (see `AdaptiveConcurrency`).")
    public static let adaptiveInitialLimit = integer(
        "queue.adaptive.initialLimit", \.queue.orDefault.adaptive.orDefault.initialLimit, default: "4",
        range: RequestQueue.Limits.concurrencyRange, allowed: "minimumLimit to maxConcurrentPerHost", "Each host's first limit.")
    public static let adaptiveMinimumLimit = integer(
        "queue.adaptive.minimumLimit", \.queue.orDefault.adaptive.orDefault.minimumLimit, default: "1",
        range: RequestQueue.Limits.concurrencyRange, allowed: "1 to maxConcurrentPerHost", "The lowest limit.")
    public static let adaptiveLatencyTolerance = number(
        "queue.adaptive.latencyTolerance", \.queue.orDefault.adaptive.orDefault.latencyTolerance, default: "2", range: 1.1...100,
        "How far above its best latency a host may go before its limit falls.")
    public static let adaptiveBackoffRatio = number(
        "queue.adaptive.backoffRatio", \.queue.orDefault.adaptive.orDefault.backoffRatio, default: "0.9", range: 0.5...0.99,
        "What a falling limit is multiplied by.")

    // MARK: Resilience

    public static let budgetShare = number(
        "resilience.retryBudget.share", \.resilience.retryBudget.share, default: "0.2", range: 0...1,
        "Retries as a share of each host's calls.")
    public static let budgetMinPerSecond = integer(
        "resilience.retryBudget.minPerSecond", \.resilience.retryBudget.minPerSecond, default: "10", range: 0...1000,
        "Retries a host may always get.")
    public static let budgetWindow = seconds(
        "resilience.retryBudget.window", \.resilience.retryBudget.window, default: "10", range: .seconds(1) ... .seconds(300),
        "The window the share is counted over.")
    public static let breaker = section(
        "resilience.circuitBreaker", \.resilience.circuitBreaker,
        "Fails calls to a failing host at once (see `CircuitBreakerPolicy`; product `CourierResilience`).")
    public static let breakerConsecutiveFailures = integer(
        "resilience.circuitBreaker.consecutiveFailures", \.resilience.circuitBreaker.orDefault.consecutiveFailures, default: "5",
        range: 1...1000,
        "Failures in a row that open the circuit.")
    public static let breakerFailureRatio = number(
        "resilience.circuitBreaker.failureRatio", \.resilience.circuitBreaker.orDefault.failureRatio, default: "0.5", range: 0...1,
        aboveLower: true,
        "The share of failures in the window that opens it.")
    public static let breakerMinimumCalls = integer(
        "resilience.circuitBreaker.minimumCalls", \.resilience.circuitBreaker.orDefault.minimumCalls, default: "20", range: 1...100_000,
        "Calls in the window before the ratio counts.")
    public static let breakerWindow = seconds(
        "resilience.circuitBreaker.window", \.resilience.circuitBreaker.orDefault.window, default: "30",
        range: .seconds(1) ... .seconds(3600), "The window calls are counted in.")
    public static let breakerOpenDuration = seconds(
        "resilience.circuitBreaker.openDuration", \.resilience.circuitBreaker.orDefault.openDuration, default: "5",
        range: .milliseconds(100) ... .seconds(3600),
        "How long an open circuit fails calls before it tries one.")
    public static let breakerStatuses = statuses(
        "resilience.circuitBreaker.statuses", \.resilience.circuitBreaker.orDefault.failingStatuses, default: "500, 502, 503, 504",
        "The statuses that count as failures.")
    public static let hedging = section(
        "resilience.hedging", \.resilience.hedging,
        "Sends a slow idempotent call's second copy (see `HedgingPolicy`; product `CourierResilience`).")
    public static let hedgingPercentile = number(
        "resilience.hedging.percentile", \.resilience.hedging.orDefault.percentile, default: "0.95", range: 0.5...0.999,
        "The latency a copy waits for.")
    public static let hedgingWindow = integer(
        "resilience.hedging.window", \.resilience.hedging.orDefault.window, default: "100", range: 20...10_000,
        "The latencies kept, per endpoint (a count).")
    public static let hedgingMinimumSamples = integer(
        "resilience.hedging.minimumSamples", \.resilience.hedging.orDefault.minimumSamples, default: "20", range: 10...10_000,
        allowed: "10 to the window (at most 10000)",
        "Latencies needed before hedging starts.")
    public static let hedgingMaxExtraShare = number(
        "resilience.hedging.maxExtraShare", \.resilience.hedging.orDefault.maxExtraShare, default: "0.05", range: 0.001...0.5,
        "The most extra traffic hedging may add.")
    public static let hedgingMinimumDelay = ConfigurationKey(
        "resilience.hedging.minimumDelayMs", .milliseconds, default: "1", "The shortest wait before a copy (0 to 60000)."
    ) { load, value, name throws(ConfigurationError) in
        let milliseconds = try value.number(name, load)
        let most = Double(HedgingPolicy.minimumDelayRange.upperBound / .milliseconds(1))
        // (Checked before the conversion, which a value past Int64 would trap in.)
        guard milliseconds.isFinite, (0...most).contains(milliseconds) else {
            throw load.error(name, "\(milliseconds)", allowed: "0 to \(Int(most)) milliseconds")
        }
        load.configuration.resilience.hedging.orDefault.minimumDelay = .milliseconds(Int64(milliseconds))
    }.bounded(.within(milliseconds: HedgingPolicy.minimumDelayRange, \.resilience.hedging.orDefault.minimumDelay))
    public static let deadlineHeader = text(
        "resilience.deadlineHeader", \.resilience.deadlineHeader, default: "none",
        "A header each attempt carries the time left in, in milliseconds.")
    public static let retriesUnsentRequests = flag(
        "resilience.retriesUnsentRequests", \.resilience.retriesUnsentRequests, default: "true",
        "Whether an attempt that never reached the server is sent once more.")
}
