import CoreMetrics
import Courier
import Synchronization

/// The circuits of one client, one per host (the request's authority), under one lock.
///
/// At most ``maxHosts`` hosts are tracked. When a new host would pass that, idle circuits (closed,
/// with nothing in their window) are forgotten; if none is idle, the new host is not tracked and
/// its calls pass unguarded. Transitions are exported as the counter
/// `courier_circuit_transitions` (dimensions `host` and `state`: `open`, `half_open`, `closed`),
/// whose host values are bounded by the same limit.
final class CircuitBreaker: Sendable {
    /// The most hosts tracked.
    static let maxHosts = 1024

    let policy: CircuitBreakerPolicy
    private let sliceWidth: Int64
    private let circuits = Mutex<[String: Circuit]>([:])
    /// Where transitions are counted: `nil` for nowhere, or a factory (the bootstrapped one when
    /// `exports` was asked for without one).
    private let metrics: (any MetricsFactory)?
    private let exports: Bool

    /// Creates the circuits.
    /// - Parameters:
    ///   - policy: The limits.
    ///   - exports: Whether transitions are counted in swift-metrics.
    ///   - metrics: The backend; `nil` uses the bootstrapped one.
    init(policy: CircuitBreakerPolicy, exports: Bool, metrics: (any MetricsFactory)? = nil) {
        self.policy = policy
        sliceWidth = RateWindow.sliceWidth(of: policy.window)
        self.exports = exports
        self.metrics = metrics
    }

    /// Each tracked host's state.
    var states: [String: CircuitState] {
        circuits.withLock { $0.mapValues(\.publicState) }
    }

    /// Decides whether a call to `host` may go now.
    func admit(host: String, now: Int64) -> (Circuit.Admission, Circuit.Transition?) {
        let result = circuits.withLock { table -> (Circuit.Admission, Circuit.Transition?) in
            guard table[host] != nil || Self.makeRoom(in: &table, now: now, sliceWidth: sliceWidth) else { return (.pass, nil) }
            return table[host, default: Circuit()].admit(now: now)
        }
        if let transition = result.1 { count(transition, host: host) }
        return result
    }

    /// Counts how an admitted call to `host` ended.
    func record(_ outcome: Circuit.Outcome, probe: Bool, host: String, now: Int64) -> Circuit.Transition? {
        let transition = circuits.withLock { table -> Circuit.Transition? in
            guard table[host] != nil else { return nil }
            return table[host]?.record(outcome, probe: probe, now: now, policy: policy, sliceWidth: sliceWidth)
        }
        if let transition { count(transition, host: host) }
        return transition
    }

    /// Forgets idle circuits when the table is full; whether there is room for one more.
    private static func makeRoom(in table: inout [String: Circuit], now: Int64, sliceWidth: Int64) -> Bool {
        guard table.count >= maxHosts else { return true }
        for host in Array(table.keys) where table[host]?.isIdle(now: now, sliceWidth: sliceWidth) == true {
            table[host] = nil
        }
        return table.count < maxHosts
    }

    private func count(_ transition: Circuit.Transition, host: String) {
        guard exports else { return }
        let state: CircuitState =
            switch transition {
            case .opened: .open
            case .halfOpened: .halfOpen
            case .closed: .closed
            }
        let dimensions = [("host", host), ("state", state.rawValue)]
        let counter =
            metrics.map { Counter(label: "courier_circuit_transitions", dimensions: dimensions, factory: $0) }
            ?? Counter(label: "courier_circuit_transitions", dimensions: dimensions)
        counter.increment()
    }
}
