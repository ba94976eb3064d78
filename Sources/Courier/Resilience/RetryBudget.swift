import Synchronization

/// How many retries ``RetryMiddleware`` may add to a client's traffic to one host: a share of
/// the calls over a sliding window, plus a floor, as Finagle's retry budget (and tower's and
/// Envoy's) does.
///
/// Retries multiply load exactly when a host is failing: with three attempts per call, a host
/// that fails everything receives three times the traffic. The budget caps that. Over the last
/// ``window``, a host may receive at most `share × calls + minPerSecond × window` retries; once
/// they are spent, a failed attempt is not retried: the call ends with that attempt's answer or
/// error, ``RequestMetrics/retryRefusedByBudget`` is set, and the metrics export counts it
/// (`courier_retry_budget_refusals`). The calls counted are those the policy could retry (an
/// idempotent method or an idempotency key, a replayable body), retried or not: the share is of the
/// traffic retries could multiply.
///
/// The default (20% of calls plus 10 retries a second, over 10 seconds) lets a healthy host's
/// occasional failure be retried every time and holds a failing host to about 1.2 times its
/// traffic.
///
/// It is part of ``ClientConfiguration/resilience`` (`resilience.retryBudget` in a configuration
/// file), and applies when the client retries (``ClientConfiguration/retry``):
///
/// ```swift
/// configuration.retry = RetryPolicy()
/// configuration.resilience.retryBudget.share = 0.1  // retries add at most 10% (plus the floor)
/// ```
public struct RetryBudget: Sendable, Hashable {
    /// Retries allowed as a share of the host's calls in the window: 0.2 by default (0 to 1).
    public var share = 0.2
    /// Retries allowed per second of the window whatever the traffic, so that a quiet host can
    /// still be retried: 10 by default (0 to 1,000).
    public var minPerSecond = 10
    /// The window calls and retries are counted over: 10 seconds by default (1 to 300 s).
    public var window: Duration = .seconds(10)

    /// A budget with every default.
    public init() {}

    /// Checks the values.
    /// - Parameter source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `resilience.retryBudget.*` key out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.resilience.retryBudget = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "resilience.retryBudget.", source: source)
    }

    /// The retries allowed in one window with `calls` calls in it.
    /// - Parameter calls: The host's calls in the window.
    /// - Returns: `share × calls + minPerSecond × window`, rounded down.
    public func allowance(calls: Int) -> Int {
        let floor = Double(minPerSecond) * Double(window.components.seconds)
        return Int((share * Double(calls) + floor).rounded(.down))
    }
}

/// The calls and retries of each host over a ``RetryBudget``'s window: one per
/// ``RetryMiddleware``, so one per client.
///
/// Hosts are the request's authority (`host:port`). At most ``maxHosts`` are tracked; when a new
/// host would pass that, the hosts with nothing left in their window are forgotten, and if every
/// host is still active, the new one shares a single overflow entry.
package final class RetryBudgetLedger: Sendable {
    /// The most hosts tracked one by one.
    static let maxHosts = 1024
    /// The entry hosts beyond ``maxHosts`` share.
    static let overflowHost = "(other hosts)"

    private let budget: RetryBudget
    private let sliceWidth: Int64
    private let hosts = Mutex<[String: RateWindow]>([:])

    init(budget: RetryBudget) {
        self.budget = budget
        sliceWidth = RateWindow.sliceWidth(of: budget.window)
    }

    /// Counts a call of `host`.
    /// - Parameters:
    ///   - host: The request's authority.
    ///   - elapsedNanoseconds: The time now, in nanoseconds since any fixed origin.
    package func deposit(host: String, elapsedNanoseconds: Int64) {
        hosts.withLock { table in
            let key = Self.key(for: host, in: &table, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
            _ = table[key, default: RateWindow()].add(calls: 1, failures: 0, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
        }
    }

    /// Takes one retry of `host` from the budget, when one is left.
    /// - Parameters:
    ///   - host: The request's authority.
    ///   - elapsedNanoseconds: The time now, on the origin ``deposit(host:elapsedNanoseconds:)`` used.
    /// - Returns: `true` when the retry may go ahead (and is counted).
    package func withdraw(host: String, elapsedNanoseconds: Int64) -> Bool {
        hosts.withLock { table in
            let key = Self.key(for: host, in: &table, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
            var window = table[key] ?? RateWindow()
            let now = window.add(calls: 0, failures: 0, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
            let allowed = now.failures < budget.allowance(calls: now.calls)
            if allowed { _ = window.add(calls: 0, failures: 1, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth) }
            table[key] = window
            return allowed
        }
    }

    /// The entry `host` counts in: its own, or the overflow entry once ``maxHosts`` are active.
    private static func key(for host: String, in table: inout [String: RateWindow], elapsedNanoseconds: Int64, sliceWidth: Int64)
        -> String
    {
        guard table[host] == nil, table.count >= maxHosts else { return host }
        table = table.filter { entry in
            var window = entry.value
            let counts = window.add(calls: 0, failures: 0, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
            return counts.calls > 0 || counts.failures > 0
        }
        return table.count >= maxHosts ? overflowHost : host
    }
}
