/// Wakes sleepers whose deadline passed, for every call in the process, with one timer.
///
/// `Task.sleep` costs a system timer per call that stays armed until its time comes, even when
/// the call finished long before: at thousands of calls per second with 30-second deadlines that
/// is a heap of hundreds of thousands of dead timers. Here a call costs a dictionary entry and a
/// heap slot, removed when it finishes; one timer task sleeps until the earliest deadline and is
/// replaced only when a new deadline is earlier than every other.
final class DeadlineWatch: Sendable {
    /// The watch every client shares.
    static let shared = DeadlineWatch()

    private struct Entry: Comparable {
        var deadline: ContinuousClock.Instant
        var id: UInt64
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
        }
    }

    private enum Sleeper {
        /// Has an id, not yet a continuation.
        case pending
        /// Cancelled before its continuation was registered.
        case cancelledEarly
        case waiting(ContinuousClock.Instant, CheckedContinuation<Bool, Never>)
    }

    private struct State {
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        /// Deadlines of sleepers; entries whose sleeper left are skipped and compacted away.
        var heap = MinHeap<Entry>()
        /// The timer task's generation and the instant it sleeps until.
        var timer: (generation: UInt64, target: ContinuousClock.Instant)?
        var generation: UInt64 = 0
        /// The running timer task, cancelled when a newer one replaces it.
        var timerTask: Task<Void, Never>?

        /// Rebuilds the heap from the live sleepers when stale entries outnumber them.
        mutating func compactIfMostlyStale() {
            guard heap.count > 64, heap.count > 2 * sleepers.count else { return }
            var fresh = MinHeap<Entry>()
            for (id, sleeper) in sleepers {
                if case .waiting(let deadline, _) = sleeper { fresh.push(Entry(deadline: deadline, id: id)) }
            }
            heap = fresh
        }
    }

    private let state = Locked(State())

    /// Suspends until `deadline` passes (returns `true`) or the task is cancelled (returns `false`).
    func sleep(until deadline: ContinuousClock.Instant) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            state.sleepers[state.nextID] = .pending
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let registration = state.withLock { state -> Registration in
                    if case .cancelledEarly = state.sleepers[id] {
                        state.sleepers[id] = nil
                        return .cancelled
                    }
                    if ContinuousClock.now >= deadline {
                        state.sleepers[id] = nil
                        return .due
                    }
                    state.sleepers[id] = .waiting(deadline, continuation)
                    state.heap.push(Entry(deadline: deadline, id: id))
                    if let timer = state.timer, timer.target <= deadline { return .waiting(startTimer: nil) }
                    state.generation &+= 1
                    state.timer = (state.generation, deadline)
                    return .waiting(startTimer: state.generation)
                }
                switch registration {
                case .cancelled: continuation.resume(returning: false)
                case .due: continuation.resume(returning: true)
                case .waiting(let generation?): startTimerTask(generation: generation, target: deadline)
                case .waiting(nil): break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                switch state.sleepers[id] {
                case .waiting(_, let continuation):
                    state.sleepers[id] = nil
                    state.compactIfMostlyStale()
                    return continuation
                case .pending:
                    state.sleepers[id] = .cancelledEarly
                    return nil
                case .cancelledEarly, nil:
                    return nil  // already finished: a late cancellation leaves nothing behind
                }
            }
            continuation?.resume(returning: false)
        }
    }

    /// Sleepers waiting, and heap slots (live and stale); for tests.
    var pendingCount: (sleepers: Int, heap: Int) { state.withLock { ($0.sleepers.count, $0.heap.count) } }

    private enum Registration {
        case cancelled
        case due
        /// Waiting; starts a timer of this generation when the deadline is the earliest.
        case waiting(startTimer: UInt64?)
    }

    /// Starts a timer task that wakes due sleepers until none is left; a newer generation
    /// replaces it.
    private func startTimerTask(generation: UInt64, target: ContinuousClock.Instant) {
        let task = makeTimerTask(generation: generation, target: target)
        let replaced = state.withLock { state -> Task<Void, Never>? in
            guard state.timer?.generation == generation else { return task }  // already superseded
            defer { state.timerTask = task }
            return state.timerTask
        }
        replaced?.cancel()
    }

    private func makeTimerTask(generation: UInt64, target: ContinuousClock.Instant) -> Task<Void, Never> {
        Task.detached { [self] in
            var target = target
            while true {
                try? await Task.sleep(until: target, clock: .continuous)
                let (due, next) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], ContinuousClock.Instant?) in
                    guard state.timer?.generation == generation else { return ([], nil) }
                    var due: [CheckedContinuation<Bool, Never>] = []
                    let now = ContinuousClock.now
                    while let first = state.heap.min, first.deadline <= now || state.sleepers[first.id] == nil {
                        state.heap.popMin()
                        if case .waiting(_, let continuation) = state.sleepers.removeValue(forKey: first.id) {
                            due.append(continuation)
                        }
                    }
                    guard let next = state.heap.min else {
                        state.timer = nil
                        return (due, nil)
                    }
                    state.timer = (generation, next.deadline)
                    return (due, next.deadline)
                }
                for continuation in due { continuation.resume(returning: true) }
                guard let next else { return }
                target = next
            }
        }
    }
}
