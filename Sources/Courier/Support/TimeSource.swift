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
/// Implementing a time source: `now` never goes backwards; `sleep(until:)` returns `true` once
/// `now` has reached the instant, and `false` promptly when the waiting task is cancelled first.
public protocol TimeSource: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }

    /// Suspends until this clock shows `deadline`.
    /// - Parameter deadline: The instant to wait for; one already passed returns at once.
    /// - Returns: `true` when the instant came, `false` when the task was cancelled first.
    func sleep(until deadline: ContinuousClock.Instant) async -> Bool
}

/// The monotonic system clock (`ContinuousClock`).
public struct SystemTimeSource: TimeSource {
    /// Creates the system time source.
    public init() {}

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { ContinuousClock.now }

    /// Waits on the process's one shared timer (a heap of deadlines), not a system timer per call.
    public func sleep(until deadline: ContinuousClock.Instant) async -> Bool {
        await DeadlineWatch.shared.sleep(until: deadline)
    }
}

/// A clock that moves only when told to, for tests: sleepers wake when ``advance(by:)`` moves it
/// past their instant.
///
/// ```swift
/// let time = ManualTimeSource()
/// var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
/// configuration.timeSource = time
/// let call = Task { try await client.send(Slow()) }
/// await time.waitForSleepers(1)        // the call is waiting on the clock
/// time.advance(by: .seconds(30))       // its deadline passes: it fails as timed out
/// ```
public final class ManualTimeSource: TimeSource {
    private enum Sleeper {
        /// Has an id, not yet a continuation.
        case pending
        /// Cancelled before its continuation was stored.
        case cancelled
        case waiting(ContinuousClock.Instant, CheckedContinuation<Bool, Never>)
    }

    private struct State {
        var now: ContinuousClock.Instant
        var nextID: UInt64 = 0
        /// Every sleep in progress; an entry leaves when its sleep returns.
        var sleepers: [UInt64: Sleeper] = [:]
        /// Tasks in ``waitForSleepers(_:)``: how many sleepers each waits for.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        var waitingCount: Int {
            sleepers.values.count { if case .waiting = $0 { true } else { false } }
        }

        /// Removes and returns the watchers whose count is reached.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            let waiting = waitingCount
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

    /// How many tasks are waiting on this clock.
    public var sleeperCount: Int { state.withLock { $0.waitingCount } }

    /// Moves the clock forward and wakes every sleeper whose instant has come.
    /// - Parameter duration: How far; negative durations are ignored (the clock is monotonic).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        let due = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.now = state.now.advanced(by: duration)
            var due: [CheckedContinuation<Bool, Never>] = []
            for (id, sleeper) in state.sleepers {
                guard case .waiting(let deadline, let continuation) = sleeper, deadline <= state.now else { continue }
                state.sleepers[id] = nil
                due.append(continuation)
            }
            return due
        }
        for continuation in due { continuation.resume(returning: true) }
    }

    /// Suspends until ``advance(by:)`` moves the clock to `deadline` (or the task is cancelled).
    public func sleep(until deadline: ContinuousClock.Instant) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            state.sleepers[state.nextID] = .pending
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (answer, watchers) = state.withLock { state -> (Bool?, [CheckedContinuation<Void, Never>]) in
                    if case .cancelled = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return (false, [])
                    }
                    if state.now >= deadline {
                        state.sleepers[id] = nil
                        return (true, [])
                    }
                    state.sleepers[id] = .waiting(deadline, continuation)
                    return (nil, state.satisfiedWatchers())
                }
                for watcher in watchers { watcher.resume() }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                switch state.sleepers[id] {
                case .pending:
                    state.sleepers[id] = .cancelled
                    return nil
                case .waiting(_, let continuation):
                    state.sleepers[id] = nil
                    return continuation
                case .cancelled, nil:
                    return nil  // already finished
                }
            }
            continuation?.resume(returning: false)
        }
    }

    /// Suspends until at least `count` tasks wait on this clock, so a test advances it only once
    /// the code under test has started waiting.
    /// - Parameter count: How many sleepers to wait for.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.waitingCount >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
