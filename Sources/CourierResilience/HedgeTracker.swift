import Courier
import Synchronization

/// The recent calls of each endpoint, for hedging: their latencies to the head (for the
/// percentile) and which of them were hedged (for the cap). One per client.
///
/// Endpoints are the call's endpoint name, or its method, authority and path. At most
/// ``maxEndpoints`` are tracked; past that, new endpoints share one entry.
final class HedgeTracker: Sendable {
    static let maxEndpoints = 512
    static let overflowKey = "(other endpoints)"

    struct Endpoint {
        var latencies: [Int64] = []
        var hedged: [Bool] = []
        var next = 0
        var hedges = 0
        /// The percentile, recomputed every few samples (sorting per call would cost more than it saves).
        var threshold: Int64?
        var sinceRecompute = 0
    }

    private let policy: HedgingPolicy
    private let endpoints = Mutex<[String: Endpoint]>([:])

    init(policy: HedgingPolicy) {
        self.policy = policy
    }

    /// How long a call of `key` waits before its copy, or `nil` when it is not hedged: too few
    /// samples yet, or the endpoint's copies are at the cap.
    func delay(for key: String) -> Duration? {
        endpoints.withLock { table in
            guard let entry = table[key], entry.latencies.count >= policy.minimumSamples, let threshold = entry.threshold else {
                return nil
            }
            guard Double(entry.hedges + 1) <= policy.maxExtraShare * Double(entry.latencies.count) else { return nil }
            return max(policy.minimumDelay, .nanoseconds(threshold))
        }
    }

    /// Records one call of `key`: its latency to the head, and whether a copy was sent.
    func record(_ key: String, latency: Duration, hedged: Bool) {
        let nanoseconds = max(0, latency.components.seconds * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
        endpoints.withLock { table in
            let key = table[key] != nil || table.count < Self.maxEndpoints ? key : Self.overflowKey
            var entry = table[key] ?? Endpoint()
            if entry.latencies.count < policy.window {
                entry.latencies.append(nanoseconds)
                entry.hedged.append(hedged)
            } else {
                if entry.hedged[entry.next] { entry.hedges -= 1 }
                entry.latencies[entry.next] = nanoseconds
                entry.hedged[entry.next] = hedged
                entry.next = (entry.next + 1) % policy.window
            }
            if hedged { entry.hedges += 1 }
            entry.sinceRecompute += 1
            if entry.threshold == nil || entry.sinceRecompute >= 8 {
                let sorted = entry.latencies.sorted()
                let index = min(sorted.count - 1, Int((Double(sorted.count) * policy.percentile).rounded(.up)) - 1)
                entry.threshold = sorted[max(0, index)]
                entry.sinceRecompute = 0
            }
            table[key] = entry
        }
    }
}
