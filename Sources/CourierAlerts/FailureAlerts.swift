import Courier
import Synchronization

/// Watches every call of a client and raises an ``Alert`` when an ``AlertRule`` trips, and
/// again when it recovers.
///
/// - **Deduplicated**: while a rule's condition holds for a group, no further alert is sent.
/// - **Rate-limited**: at most one trip per rule and group per ``AlertRule/minimumInterval``.
/// - **Never in the way**: counting takes a lock for a few operations; alerts go to the sink
///   through a bounded buffer (``bufferSize``, oldest kept) drained by one task, so a slow or
///   failing sink never delays or changes a call. Alerts that do not fit are counted in
///   ``droppedAlerts``.
/// - **No recursion**: calls made while an alert is being delivered (a webhook sent through
///   Courier) are not counted.
///
/// Pass it to the client as an observer, and call ``shutdown()`` when done:
/// ```swift
/// let alerts = try FailureAlerts(rules: rules, sink: LogAlertSink(logger: logger))
/// let client = try NetworkClient(configuration: configuration, transport: transport, observers: [alerts])
/// ```
public final class FailureAlerts: CallObserver {
    private struct Group {
        var consecutive = 0
        /// Calls and failures over the window; only for error-rate rules.
        var window = RateWindow()
        var firing = false
        /// Whether the current trip was sent (a rate-limited trip sends no recovery either).
        var announced = false
        var lastSent: ContinuousClock.Instant?
        var lastFailure: CallRecord?
    }

    /// A rule with what the per-call path needs worked out once. A class, so reading one per call
    /// copies no strings or sets.
    private final class PreparedRule: Sendable {
        let rule: AlertRule
        /// Whether a success counts as a failure (only if the rule lists `.success`).
        let successCountsAsFailure: Bool
        /// For an error-rate rule, the width of one window slice in nanoseconds.
        let sliceWidth: Int64

        init(_ rule: AlertRule) {
            self.rule = rule
            successCountsAsFailure = rule.failures.contains(.success)
            if case .errorRate(_, let window, _) = rule.trigger {
                sliceWidth = RateWindow.sliceWidth(of: window)
            } else {
                sliceWidth = 1
            }
        }
    }

    /// One group's state, boxed so that a rule's `RecentTable` can hand it out for updating.
    private final class GroupState {
        var group = Group()
    }

    /// Every rule's groups (one entry per rule, in order) and how many groups exist in all.
    private struct Tables {
        var rules: [RecentTable<String, GroupState>]
        var groupCount = 0
    }

    /// The rules, as given.
    public let rules: [AlertRule]
    /// How many alerts may wait for the sink: 256.
    public let bufferSize = 256
    /// Groups tracked, per rule on average: at most 1,000 × the number of rules in all (calls of
    /// further groups are not counted).
    public let maxGroupsPerRule = 1000
    /// How finely an error-rate window is counted: in this many slices, so a call leaves the
    /// window at most 1/60 of it late, and a group's memory stays the same at any call rate.
    public let windowSlices = RateWindow.slices

    private let timeSource: any TimeSource
    /// Where window slices are counted from.
    private let origin: ContinuousClock.Instant
    private let prepared: [PreparedRule]
    /// Whether any rule counts over a window (only then is the time since `origin` needed).
    private let countsWindows: Bool
    private let tables: Locked<Tables>
    private let dropped = Locked(0)
    private let outbox: AsyncStream<Alert>.Continuation
    private let delivery: Task<Void, Never>

    /// Creates the observer and starts its delivery task.
    /// - Parameters:
    ///   - rules: The rules; invalid ones are rejected.
    ///   - sink: Where alerts go.
    ///   - timeSource: The clock for windows and rate limits.
    /// - Throws: `ConfigurationError` for a rule out of range.
    public init(rules: [AlertRule], sink: any AlertSink, timeSource: any TimeSource = SystemTimeSource()) throws(ConfigurationError) {
        for rule in rules { try rule.validate() }
        self.rules = rules
        self.prepared = rules.map(PreparedRule.init)
        self.tables = Locked(Tables(rules: Array(repeating: RecentTable(), count: rules.count)))
        self.countsWindows = rules.contains {
            if case .errorRate = $0.trigger { true } else { false }
        }
        self.timeSource = timeSource
        self.origin = timeSource.now
        let (stream, continuation) = AsyncStream<Alert>.makeStream(bufferingPolicy: .bufferingOldest(256))
        outbox = continuation
        delivery = Task {
            for await alert in stream {
                await AlertDelivery.run { await sink.deliver(alert) }
            }
        }
    }

    deinit {
        outbox.finish()
    }

    /// Alerts dropped because the sink fell behind by ``bufferSize``.
    public var droppedAlerts: Int { dropped.withLock { $0 } }

    /// Stops taking alerts and waits until those already buffered were delivered.
    public func shutdown() async {
        outbox.finish()
        await delivery.value
    }

    /// Counts one call against every rule that watches it.
    public func callFinished(_ record: CallRecord) {
        guard !AlertDelivery.isDeliveringInThisTask else { return }
        let outcome = record.outcome
        guard outcome != .cancelled else { return }
        let now = timeSource.now
        let elapsed = countsWindows ? RateWindow.nanoseconds(origin.duration(to: now)) : 0
        var alerts: [Alert] = []
        let groupLimit = maxGroupsPerRule * rules.count
        tables.withLock { tables in
            for index in prepared.indices {
                let rule = prepared[index]
                guard let name = rule.rule.group(of: record) else { continue }
                let state: GroupState
                if let known = tables.rules[index].value(for: name) {
                    state = known
                } else {
                    guard tables.groupCount < groupLimit else { continue }
                    state = GroupState()
                    tables.rules[index].insert(state, for: name)
                    tables.groupCount += 1
                }
                // Most calls succeed: decide those without hashing the outcome.
                let failed = outcome == .success ? rule.successCountsAsFailure : rule.rule.failures.contains(outcome)
                if let alert = count(
                    failed: failed, record: record, prepared: rule, group: name, state: &state.group, now: now, elapsed: elapsed)
                {
                    alerts.append(alert)
                }
            }
        }
        for alert in alerts {
            if case .dropped = outbox.yield(alert) { dropped.withLock { $0 += 1 } }
        }
    }

    /// Updates one group and returns the alert to send, if any.
    private func count(
        failed: Bool, record: CallRecord, prepared: PreparedRule, group: String, state: inout Group, now: ContinuousClock.Instant,
        elapsed: Int64
    ) -> Alert? {
        if failed { state.lastFailure = record }
        let holds: Bool
        let failures: Int
        let calls: Int
        switch prepared.rule.trigger {
        case .consecutiveFailures(let limit):
            state.consecutive = failed ? state.consecutive + 1 : 0
            failures = state.consecutive
            calls = state.consecutive
            // Trips at the limit; clears only at a success.
            holds = state.firing ? failed : state.consecutive >= limit
        case .errorRate(let threshold, _, let minimumCalls):
            (calls, failures) = state.window.add(failed: failed, elapsedNanoseconds: elapsed, sliceWidth: prepared.sliceWidth)
            let rate = Double(failures) / Double(max(calls, 1))
            if calls < minimumCalls {
                holds = state.firing
            } else {
                holds = rate >= threshold
            }
        }
        if holds == state.firing { return nil }
        state.firing = holds
        let sample = state.lastFailure ?? record
        if holds {
            if let last = state.lastSent, last.duration(to: now) < prepared.rule.minimumInterval {
                state.announced = false
                return nil
            }
            state.lastSent = now
            state.announced = true
            var alert = Alert(
                kind: .tripped, rule: prepared.rule.name, group: group, endpoint: record.endpoint, team: record.team, failures: failures,
                calls: calls, sampleRequestID: sample.requestID)
            alert.lastError = sample.error?.shortDescription
            alert.lastErrorDetail = sample.error?.description
            return alert
        }
        guard state.announced else { return nil }
        state.announced = false
        return Alert(
            kind: .recovered, rule: prepared.rule.name, group: group, endpoint: record.endpoint, team: record.team, failures: failures,
            calls: calls, sampleRequestID: sample.requestID)
    }
}

/// Marks the task that delivers alerts, so that calls it makes are not counted again.
public enum AlertDelivery {
    /// True inside an alert sink's `deliver` (``FailureAlerts`` sets it; read it, do not set it).
    @TaskLocal public static var isDelivering = false

    /// How many deliveries are running in the process. While none is, no task can be inside one,
    /// and a finished call need not look up the task-local value.
    private static let running = Atomic<Int>(0)

    /// Whether the current task is delivering an alert; cheap while no delivery runs.
    static var isDeliveringInThisTask: Bool {
        running.load(ordering: .acquiring) > 0 && isDelivering
    }

    /// Runs one delivery with ``isDelivering`` set.
    static func run(_ delivery: () async -> Void) async {
        running.add(1, ordering: .releasing)
        defer { running.subtract(1, ordering: .releasing) }
        await $isDelivering.withValue(true) { await delivery() }
    }
}
