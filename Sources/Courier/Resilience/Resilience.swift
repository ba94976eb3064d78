import HTTPTypes

/// The client's resilience settings, in one place: what limits retries and when a failing host is
/// left alone for a while. Each setting is off or conservative by default.
///
/// In a configuration file they are the `resilience` object:
/// ```json
/// "resilience": { "retryBudget": { "share": 0.2, "minPerSecond": 10, "window": 10 }, "deadlineHeader": "X-Request-Timeout-Ms",
///                 "circuitBreaker": { "consecutiveFailures": 5, "failureRatio": 0.5, "minimumCalls": 20,
///                                     "window": 30, "openDuration": 5, "statuses": [500, 502, 503, 504] },
///                 "hedging": { "percentile": 0.95, "window": 100, "minimumSamples": 20, "maxExtraShare": 0.05,
///                              "minimumDelayMs": 1 } }
/// ```
public struct Resilience: Sendable, Hashable {
    /// How many retries the client may add to each host's traffic (used when
    /// ``ClientConfiguration/retry`` is set). On by default: 20% plus 10 a second over 10 s.
    public var retryBudget = RetryBudget()
    /// The circuit breaker per host, or `nil` (the default) for none. Carried out by the product
    /// `CourierResilience`: a client refuses a policy in a program without it.
    public var circuitBreaker: CircuitBreakerPolicy?
    /// The name of a request header that tells the server how long the caller will wait: the time
    /// left before the call's deadline, in whole milliseconds, written on every attempt (so a retry
    /// or a redirect hop sends what is left then), for example `X-Request-Timeout-Ms`. A request
    /// that already has the header keeps its own value. `nil` (the default) sends none.
    public var deadlineHeader: String?
    /// Hedging of slow idempotent calls, or `nil` (the default) for none. Carried out by the
    /// product `CourierResilience`: a client refuses a policy in a program without it.
    public var hedging: HedgingPolicy?
    /// Whether an attempt that never reached the server (``NetworkError/neverReachedServer``: its
    /// connection was refused or failed while opening, the server refused its HTTP/2 stream or left
    /// it above a `GOAWAY`'s last stream id, or a reused connection was found closed before any
    /// byte was written) is sent once more, whatever its method, within the call's deadline and
    /// the host's ``retryBudget``, with a body that can be sent again. On by default: the server
    /// cannot have applied it, so it cannot be applied twice. `RequestMetrics.unsentRetries` counts
    /// it. (Where a transport's own library resends such a request itself, libcurl's resends are
    /// counted in `RequestMetrics.transportResends` instead.)
    public var retriesUnsentRequests = true

    /// The defaults: a retry budget; no circuit breaker and no hedging.
    public init() {}

    /// Checks the values.
    /// - Parameter source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `resilience.*` key out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.resilience = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "resilience.", source: source)
        try checkRelations(source: source)
    }

    /// What the key table's ranges cannot say: the sections' relations, and the deadline header.
    func checkRelations(source: String) throws(ConfigurationError) {
        try circuitBreaker?.checkRelations(source: source)
        try hedging?.checkRelations(source: source)
        if let deadlineHeader, deadlineHeaderName == nil {
            throw ConfigurationError(
                key: ConfigurationKey.deadlineHeader.name, value: deadlineHeader,
                allowed:
                    "a header name (a token) other than one the client owns (Host, Content-Length, Transfer-Encoding, Connection, TE, Upgrade, Keep-Alive, Proxy-Authorization, Proxy-Connection)",
                source: source)
        }
    }

    /// ``deadlineHeader`` as a field name, when it is a valid one Courier may set.
    var deadlineHeaderName: HTTPField.Name? {
        guard let deadlineHeader, let name = HTTPField.Name(deadlineHeader) else { return nil }
        return HeaderValidation.isFraming(name) ? nil : name
    }
}
