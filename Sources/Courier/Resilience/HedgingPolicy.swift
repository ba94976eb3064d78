/// When a slow idempotent call gets a second copy (hedging, in the manner of gRPC's and Envoy's
/// hedging and of "The Tail at Scale"): once a call has waited longer than a rolling percentile of
/// its endpoint's recent latencies, one more copy of the request is sent; the first answer wins and
/// the other copy is cancelled.
///
/// Off by default (``Resilience/hedging`` is `nil`). Only calls that may have a concurrent copy by
/// the ``RepeatRule`` (an idempotent method, `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`, `TRACE`,
/// whatever `Idempotency-Key` says, and a body that can be sent again) are hedged, never
/// more than one extra copy per call. The copies are capped at ``maxExtraShare`` of an endpoint's
/// recent calls, and each one is also taken from the host's ``RetryBudget``, which retries share:
/// when either is spent, the call just waits for its first copy.
///
/// Latency is measured to the response head, per endpoint: the call's ``Endpoint/endpointName``
/// when it has one, otherwise its method, host and path (so calls whose path carries an id each
/// count apart, and are hedged only once one path has enough samples: give such endpoints a
/// name). A copy goes out on another connection over HTTP/1.1; over HTTP/2 the transport may
/// multiplex it on the same connection.
public struct HedgingPolicy: Sendable, Hashable {
    /// The percentile of an endpoint's recent latencies after which the copy is sent: 0.95 (p95)
    /// by default. From 0.5 to 0.999.
    public var percentile: Double = 0.95
    /// How many recent calls of an endpoint the percentile and the cap count: 100 by default
    /// (20 to 10,000).
    public var window: Int = 100
    /// The fewest latencies an endpoint needs before its calls are hedged: 20 by default (at least
    /// 10, at most ``window``).
    public var minimumSamples: Int = 20
    /// The most copies, as a share of the endpoint's calls in the window: 0.05 (5% more requests)
    /// by default. From 0.001 to 0.5.
    public var maxExtraShare: Double = 0.05
    /// The shortest wait before a copy, whatever the percentile says: 1 ms by default (0 to 60 s).
    public var minimumDelay: Duration = .milliseconds(1)

    /// The defaults: p95 of the last 100 calls, after 20, at most 5% extra.
    public init() {}

    /// The allowed range of ``minimumDelay``: 0 to 60 seconds.
    public static let minimumDelayRange: ClosedRange<Duration> = .zero ... .seconds(60)

    /// Checks the values.
    /// - Parameter source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `resilience.hedging.*` key out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.resilience.hedging = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "resilience.hedging.", source: source)
        try checkRelations(source: source)
    }

    /// What the key table's ranges cannot say: the samples needed fit in the window.
    func checkRelations(source: String) throws(ConfigurationError) {
        guard minimumSamples <= window else {
            throw ConfigurationError(
                key: ConfigurationKey.hedgingMinimumSamples.name, value: "\(minimumSamples)", allowed: "10 to the window (\(window))",
                source: source)
        }
    }
}
