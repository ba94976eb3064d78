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
/// let alerts = FailureAlerts(rules: rules, sink: LogAlertSink(logger: logger))
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

    private struct Key: Hashable {
        var rule: Int
        var group: String
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
    /// Per rule, whether a success counts as a failure (only if a rule lists `.success`).
    private let successCountsAsFailure: [Bool]
    private let groups = Locked<[Key: Group]>([:])
    private let dropped = Locked(0)
    private let outbox: AsyncStream<Alert>.Continuation
    private let delivery: Task<Void, Never>

    /// Creates the observer and starts its delivery task.
    /// - Parameters:
    ///   - rules: The rules; invalid ones are rejected.
    ///   - sink: Where alerts go.
    ///   - timeSource: The clock for windows and rate limits.
    /// - Throws: ``ConfigurationError`` for a rule out of range.
    public init(rules: [AlertRule], sink: any AlertSink, timeSource: any TimeSource = SystemTimeSource()) throws(ConfigurationError) {
        for rule in rules { try rule.validate() }
        self.rules = rules
        self.successCountsAsFailure = rules.map { $0.failures.contains(.success) }
        self.timeSource = timeSource
        self.origin = timeSource.now
        let (stream, continuation) = AsyncStream<Alert>.makeStream(bufferingPolicy: .bufferingOldest(256))
        outbox = continuation
        delivery = Task {
            for await alert in stream {
                await AlertDelivery.$isDelivering.withValue(true) { await sink.deliver(alert) }
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
        guard !AlertDelivery.isDelivering else { return }
        let outcome = record.outcome
        guard outcome != .cancelled else { return }
        let now = timeSource.now
        var alerts: [Alert] = []
        groups.withLock { groups in
            for index in rules.indices {
                guard let name = rules[index].group(of: record) else { continue }
                let key = Key(rule: index, group: name)
                let slot: Dictionary<Key, Group>.Index
                if let found = groups.index(forKey: key) {
                    slot = found
                } else {
                    guard groups.count < maxGroupsPerRule * rules.count else { continue }
                    groups[key] = Group()
                    guard let inserted = groups.index(forKey: key) else { continue }
                    slot = inserted
                }
                // Most calls succeed: decide those without hashing the outcome.
                let failed = outcome == .success ? successCountsAsFailure[index] : rules[index].failures.contains(outcome)
                if let alert = count(failed: failed, record: record, rule: rules[index], group: name, state: &groups.values[slot], now: now)
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
        failed: Bool, record: CallRecord, rule: AlertRule, group: String, state: inout Group, now: ContinuousClock.Instant
    ) -> Alert? {
        if failed { state.lastFailure = record }
        let holds: Bool
        let failures: Int
        let calls: Int
        switch rule.trigger {
        case .consecutiveFailures(let limit):
            state.consecutive = failed ? state.consecutive + 1 : 0
            failures = state.consecutive
            calls = state.consecutive
            // Trips at the limit; clears only at a success.
            holds = state.firing ? failed : state.consecutive >= limit
        case .errorRate(let threshold, let window, let minimumCalls):
            (calls, failures) = state.window.add(failed: failed, elapsed: origin.duration(to: now), window: window)
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
            if let last = state.lastSent, last.duration(to: now) < rule.minimumInterval {
                state.announced = false
                return nil
            }
            state.lastSent = now
            state.announced = true
            return Alert(
                kind: .tripped, rule: rule.name, group: group, endpoint: record.endpoint, team: record.team, failures: failures,
                calls: calls,
                lastError: sample.error?.shortDescription, lastErrorDetail: sample.error?.description, sampleRequestID: sample.requestID)
        }
        guard state.announced else { return nil }
        state.announced = false
        return Alert(
            kind: .recovered, rule: rule.name, group: group, endpoint: record.endpoint, team: record.team, failures: failures, calls: calls,
            lastError: nil, lastErrorDetail: nil, sampleRequestID: sample.requestID)
    }
}

/// Marks the task that delivers alerts, so that calls it makes are not counted again.
public enum AlertDelivery {
    /// True inside an alert sink's `deliver`.
    @TaskLocal public static var isDelivering = false
}

/// The calls and failures of one group over a sliding window, counted in ``slices`` equal
/// slices of it: constant memory and work per call at any call rate.
struct RateWindow: Sendable {
    /// How many slices a window has.
    static let slices = 60

    private var calls = [Int](repeating: 0, count: slices)
    private var failures = [Int](repeating: 0, count: slices)
    /// The absolute slice number each entry counts, or -1 for none yet.
    private var slice = [Int64](repeating: -1, count: slices)

    /// Counts one call and returns the calls and failures now inside the window.
    /// - Parameters:
    ///   - failed: Whether the call failed.
    ///   - elapsed: The time since a fixed origin (negative values count as zero).
    ///   - window: The window's length (positive).
    mutating func add(failed: Bool, elapsed: Duration, window: Duration) -> (calls: Int, failures: Int) {
        let width = max(Int64(1), Self.nanoseconds(window) / Int64(Self.slices))
        let current = max(0, Self.nanoseconds(elapsed)) / width
        let index = Int(current % Int64(Self.slices))
        if slice[index] != current {
            slice[index] = current
            calls[index] = 0
            failures[index] = 0
        }
        calls[index] += 1
        if failed { failures[index] += 1 }
        var totalCalls = 0
        var totalFailures = 0
        for entry in 0..<Self.slices where slice[entry] > current - Int64(Self.slices) {
            totalCalls += calls[entry]
            totalFailures += failures[entry]
        }
        return (totalCalls, totalFailures)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? Int64.min / 2 : Int64.max / 2 }
        return scaled + attoseconds / 1_000_000_000
    }
}
