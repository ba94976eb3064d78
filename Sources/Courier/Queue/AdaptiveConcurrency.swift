/// A per-host limit that follows measured latency, for a ``RequestQueue`` (opt-in:
/// ``RequestQueue/Limits/adaptive``), in the manner of Netflix's concurrency-limits AIMD limiter.
///
/// Each host starts at ``initialLimit`` calls at once. A call that holds its slot no longer than
/// ``latencyTolerance`` times the host's baseline (the shortest recent time) raises the limit by
/// `1 / limit` (about one more call per round of calls); a slower one, or one that failed by
/// timing out or losing its connection, multiplies it by ``backoffRatio``. The limit stays between
/// ``minimumLimit`` and the queue's ``RequestQueue/Limits/maxConcurrentPerHost``. The baseline is
/// the shortest time of the host's last 100 calls, so it follows the host when it gets slower for good.
///
/// The queue's shedding of calls that cannot start before their deadline
/// (``RequestQueue/Limits/shedsLateCalls``) then estimates the wait with the host's current limit
/// and recent average time per call.
public struct AdaptiveConcurrency: Sendable, Hashable {
    /// Calls at once to a host before anything is measured: 4 by default.
    public var initialLimit = 4
    /// The lowest limit: 1 by default.
    public var minimumLimit = 1
    /// How much longer than the baseline a call may take and still count as uncongested: 2.0 by
    /// default (from 1.1 to 100).
    public var latencyTolerance = 2.0
    /// What the limit is multiplied by after a slow or failed call: 0.9 by default (0.5 to 0.99).
    public var backoffRatio = 0.9

    /// The defaults.
    public init() {}

    /// Checks the values against the queue's per-host maximum.
    /// - Parameters:
    ///   - maximum: The queue's ``RequestQueue/Limits/maxConcurrentPerHost``.
    ///   - source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `queue.adaptive.*` key out of range.
    public func validate(maximum: Int, source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.queue = RequestQueue.Limits()
        configuration.queue?.adaptive = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "queue.adaptive.", source: source)
        try checkRelations(maximum: maximum, source: source)
    }

    /// What the key table's ranges cannot say: the lowest and first limits within the maximum.
    func checkRelations(maximum: Int, source: String) throws(ConfigurationError) {
        func bad(_ key: ConfigurationKey, _ value: String, _ allowed: String) -> ConfigurationError {
            ConfigurationError(key: key.name, value: value, allowed: allowed, source: source)
        }
        guard minimumLimit >= 1, minimumLimit <= maximum else {
            throw bad(.adaptiveMinimumLimit, "\(minimumLimit)", "1 to maxConcurrentPerHost (\(maximum))")
        }
        guard initialLimit >= minimumLimit, initialLimit <= maximum else {
            throw bad(.adaptiveInitialLimit, "\(initialLimit)", "minimumLimit to maxConcurrentPerHost (\(maximum))")
        }
    }
}

/// One host's adaptive limit (see ``AdaptiveConcurrency``), a value without I/O.
struct AIMDLimit: Equatable {
    static let baselineWindow = 100

    private(set) var limit: Double
    /// The shortest time of the current window, and the one before (the baseline).
    private var windowMinimum: Int64 = .max
    private var baseline: Int64 = .max
    private var samples = 0
    /// The recent average time a call holds its slot (exponentially weighted), in nanoseconds.
    private(set) var averageNanoseconds: Double = 0

    init(initial: Int) {
        limit = Double(initial)
    }

    /// The whole calls allowed at once.
    var allowed: Int { Int(limit) }

    /// Counts one call that held its slot for `nanoseconds`.
    mutating func record(nanoseconds: Int64, failed: Bool, policy: AdaptiveConcurrency, maximum: Int) {
        let latency = max(1, nanoseconds)
        averageNanoseconds = averageNanoseconds == 0 ? Double(latency) : averageNanoseconds * 0.9 + Double(latency) * 0.1
        windowMinimum = min(windowMinimum, latency)
        samples += 1
        if baseline == .max { baseline = windowMinimum }
        if samples % Self.baselineWindow == 0 {
            baseline = windowMinimum
            windowMinimum = .max
        }
        let congested = failed || Double(latency) > policy.latencyTolerance * Double(baseline)
        if congested {
            limit = max(Double(policy.minimumLimit), limit * policy.backoffRatio)
        } else {
            limit = min(Double(maximum), limit + 1 / limit)
        }
        baseline = min(baseline, latency)
    }
}
