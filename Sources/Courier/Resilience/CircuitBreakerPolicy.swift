/// When a client stops sending to a failing host for a while, and how it tries again: a circuit
/// breaker per host, in the manner of Envoy's outlier detection and Polly's circuit breaker.
///
/// A host's circuit **opens** after ``consecutiveFailures`` failed attempts in a row, or when at
/// least ``minimumCalls`` attempts in the last ``window`` failed at ``failureRatio`` or more.
/// While it is open, calls to the host fail at once with ``NetworkError/Kind/circuitOpen`` (nothing
/// is sent, and retry does not repeat them). After ``openDuration`` it is **half-open**: one call at
/// a time goes through as a probe, and the others still fail fast. A probe that succeeds
/// **closes** the circuit (its counts start again); one that fails opens it again.
///
/// A failure is an attempt that ends with no answer (a DNS, connect, TLS or transport failure, a
/// closed connection, a timeout, an invalid response) or with a status in ``failingStatuses``.
/// Cancellations, invalid requests and the caller's own limits are not the host's fault and
/// count as nothing.
///
/// The circuit is per host (scheme-less `host:port`), not per resolved address: no transport lets
/// Courier choose the address a connection goes to without Courier resolving names itself
/// (libcurl could be told one with `CURLOPT_RESOLVE`, but then Courier would own DNS, its TTLs and
/// its failures), so one bad address behind a name counts against the whole name.
///
/// Off by default: ``ClientConfiguration/resilience`` has no breaker until one is set, in code
/// or as `resilience.circuitBreaker` in a configuration file (`{}` takes every default).
///
/// ```swift
/// configuration.resilience.circuitBreaker = CircuitBreakerPolicy()  // 5 in a row, or half of 20 in 30 s; open 5 s
/// ```
public struct CircuitBreakerPolicy: Sendable, Hashable {
    /// Failed attempts in a row that open the circuit: 5 by default, as Envoy's `consecutive_5xx`
    /// (1 to 1,000).
    public var consecutiveFailures = 5
    /// The share of failed attempts in the window that opens the circuit: 0.5 by default (above 0,
    /// at most 1).
    public var failureRatio = 0.5
    /// The fewest attempts in the window for ``failureRatio`` to count: 20 by default (1 to
    /// 100,000).
    public var minimumCalls = 20
    /// The window attempts are counted over: 30 seconds by default, as Polly's sampling
    /// duration (1 to 3,600 s).
    public var window: Duration = .seconds(30)
    /// How long an open circuit refuses calls before it lets a probe through: 5 seconds by default,
    /// as Polly's break duration (0.1 to 3,600 s).
    public var openDuration: Duration = .seconds(5)
    /// The statuses that count as failures: 500, 502, 503 and 504 by default.
    public var failingStatuses: Set<Int> = [500, 502, 503, 504]

    /// A policy with every default.
    public init() {}

    /// Checks the values.
    /// - Parameter source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `resilience.circuitBreaker.*` key out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.resilience.circuitBreaker = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "resilience.circuitBreaker.", source: source)
        try checkRelations(source: source)
    }

    /// What the key table's ranges cannot say: every status is an HTTP status.
    func checkRelations(source: String) throws(ConfigurationError) {
        if let bad = failingStatuses.first(where: { !(100...599).contains($0) }) {
            throw ConfigurationError(
                key: ConfigurationKey.breakerStatuses.name, value: "\(bad)", allowed: "HTTP statuses 100 to 599", source: source)
        }
    }

    /// Whether an attempt's error is the host's failure.
    /// - Parameter error: The attempt's error.
    /// - Returns: `true` for the kinds that mean the host gave no usable answer.
    public static func isHostFailure(_ error: NetworkError) -> Bool {
        [.dnsFailure, .connectFailure, .connectionClosed, .tlsFailure, .timedOut, .invalidResponse, .transportFailure].contains(error.kind)
    }
}
