/// The one clock Courier reads and waits on: every call's deadline, retry backoff and
/// `Retry-After` waits, queue waiting (bounded by the deadline), the mock's delays, metrics,
/// refresh limits and alert windows.
///
/// The default, ``SystemTimeSource``, is the monotonic clock. Tests inject a ``ManualTimeSource``
/// and move it by hand, so a timeout or a backoff is tested by advancing the clock, not by
/// sleeping. (Transports that do real I/O also pass the time left to their library, which counts
/// it on the real clock; and a transport's stall and connect limits are socket-level limits on the
/// real clock.)
///
/// Implementing a time source: `now` never goes backwards; an alarm runs its action exactly once,
/// when `now` reaches its instant (at once, on the scheduling thread, when it already has), and
/// never after ``cancelAlarm(_:)`` returned `true`. Actions are short and never block. Waiting
/// (``sleep(until:)``) is built on alarms for every time source.
public protocol TimeSource: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }

    /// Runs `action` once this clock reaches `instant`.
    /// - Parameters:
    ///   - instant: When; one already passed runs `action` at once.
    ///   - action: What to run; short, and never blocking.
    /// - Returns: The alarm, for ``cancelAlarm(_:)``.
    func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm

    /// Removes an alarm before it rings. Cancelling an alarm that has rung or was cancelled already
    /// must do nothing (an alarm's identity is never given to another): the client may cancel a
    /// call's alarm twice.
    /// - Parameter alarm: An alarm from ``schedule(at:_:)``.
    /// - Returns: `true` when the alarm was still waiting (its action will never run).
    @discardableResult
    func cancelAlarm(_ alarm: TimeSourceAlarm) -> Bool
}

/// An alarm set on a ``TimeSource``.
public struct TimeSourceAlarm: Hashable, Sendable {
    /// The time source's number for it.
    public let id: UInt64

    /// Wraps a time source's number for an alarm.
    /// - Parameter id: The number; 0 for an alarm that rang at once.
    public init(id: UInt64) {
        self.id = id
    }
}

/// The monotonic system clock (`ContinuousClock`).
public struct SystemTimeSource: TimeSource {
    /// Creates the system time source.
    public init() {}

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { ContinuousClock.now }

    /// Sets the alarm on the process's one shared timer (a table of alarms), not a system timer per call.
    public func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm {
        DeadlineWatch.shared.schedule(at: Moment(instant), action)
    }

    /// Removes the alarm from the shared timer.
    @discardableResult
    public func cancelAlarm(_ alarm: TimeSourceAlarm) -> Bool {
        DeadlineWatch.shared.cancel(alarm)
    }
}

/// A clock that moves only when told to, for tests: alarms ring (and sleepers wake) when
/// ``advance(by:)`` moves it past their instant.
///
/// ```swift
/// let time = ManualTimeSource()
/// var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
/// configuration.timeSource = time
/// let call = Task { try await client.send(Slow()) }
/// await time.waitForAlarms(1)          // the call's deadline is set
/// time.advance(by: .seconds(30))       // it passes: the call fails as timed out
/// ```
public final class ManualTimeSource: TimeSource {
    private struct State {
        var now: ContinuousClock.Instant
        var alarms = AlarmTable()
        /// Tasks in ``waitForAlarms(_:)``: how many alarms each waits for.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Removes and returns the watchers whose count is reached.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            let waiting = alarms.count
            guard watchers.contains(where: { $0.count <= waiting }) else { return [] }
            let ready = watchers.filter { $0.count <= waiting }.map(\.continuation)
            watchers.removeAll { $0.count <= waiting }
            return ready
        }
    }

    private let state: Locked<State>

    /// Creates a clock that reads the real time once and then stands still.
    public init() {
        state = Locked(State(now: ContinuousClock.now))
    }

    /// The instant the clock shows.
    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// How many alarms are set (a call's deadline, a sleeper) and have not rung.
    public var pendingAlarms: Int { state.withLock { $0.alarms.count } }

    /// Moves the clock forward and rings every alarm whose instant has come, earliest first.
    /// - Parameter duration: How far; negative durations are ignored (the clock is monotonic).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now = state.now.advanced(by: duration)
            return state.alarms.takeDue(at: Moment(state.now))
        }
        for action in due { action() }
    }

    /// Sets an alarm that rings when ``advance(by:)`` reaches `instant`.
    public func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm {
        let (id, watchers) = state.withLock { state -> (UInt64?, [CheckedContinuation<Void, Never>]) in
            guard state.now < instant else { return (nil, []) }
            let id = state.alarms.add(at: Moment(instant), action)
            return (id, state.satisfiedWatchers())
        }
        for watcher in watchers { watcher.resume() }
        guard let id else {
            action()
            return TimeSourceAlarm(id: 0)
        }
        return TimeSourceAlarm(id: id)
    }

    /// Removes an alarm before it rings.
    @discardableResult
    public func cancelAlarm(_ alarm: TimeSourceAlarm) -> Bool {
        state.withLock { $0.alarms.remove(alarm.id) }
    }

    /// Suspends until at least `count` alarms are set on this clock, so a test advances it only
    /// once the code under test is waiting (a call in flight has one: its deadline; a sleep adds one).
    /// - Parameter count: How many alarms to wait for.
    public func waitForAlarms(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.alarms.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
