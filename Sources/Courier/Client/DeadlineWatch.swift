/// The system clock's alarms, for every call in the process, on one timer.
///
/// `Task.sleep` costs a system timer per call that stays armed until its time comes, even when
/// the call finished long before: at thousands of calls per second with 30-second deadlines that
/// is a heap of hundreds of thousands of dead timers. Here an alarm costs a slot in an
/// ``AlarmTable``, freed when the call finishes; one timer task sleeps until the earliest alarm and is
/// replaced only when a new alarm is earlier than every other.
final class DeadlineWatch: Sendable {
    /// The watch every client shares (``SystemTimeSource`` schedules here).
    static let shared = DeadlineWatch()

    /// (A struct, not a tuple: an optional tuple is copied through outlined generic code.)
    private struct Timer {
        var generation: UInt64
        var target: Moment
    }

    private struct State {
        var alarms = AlarmTable()
        /// The running timer's generation and the instant it sleeps until.
        var timer: Timer?
        var generation: UInt64 = 0
        /// The running timer task, cancelled when a newer one replaces it.
        var timerTask: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Runs `action` once `instant` has passed (at once, on this thread, when it already has),
    /// unless ``cancel(_:)`` removes it first.
    /// - Parameters:
    ///   - instant: When.
    ///   - now: The current instant, when the caller has just read it (no second clock read);
    ///     an instant read a little earlier only means a due alarm rings on the timer, not at once.
    ///   - action: What to run.
    /// - Returns: The alarm's id.
    func schedule(at instant: Moment, now: Moment = .now(), _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm {
        let (id, startTimer) = state.withLock { state -> (UInt64?, UInt64?) in
            guard now < instant else { return (nil, nil) }
            let id = state.alarms.add(at: instant, action)
            // (`!(a < b)` rather than `b <= a`: `<=` on an instant goes through generic code.)
            if let target = state.timer?.target, !(instant < target) { return (id, nil) }
            state.generation &+= 1
            state.timer = Timer(generation: state.generation, target: instant)
            return (id, state.generation)
        }
        guard let id else {
            action()
            return TimeSourceAlarm(id: 0)
        }
        if let startTimer { startTimerTask(generation: startTimer, target: instant) }
        return TimeSourceAlarm(id: id)
    }

    /// Removes an alarm that has not rung; `true` when it was still waiting.
    @discardableResult
    func cancel(_ alarm: TimeSourceAlarm) -> Bool {
        state.withLock { $0.alarms.remove(alarm.id) }
    }

    /// Alarms waiting, and the table's slots (waiting and free); for tests.
    var pendingCount: (alarms: Int, slots: Int) { state.withLock { ($0.alarms.count, $0.alarms.capacity) } }

    /// Starts a timer task that rings due alarms until none is left; a newer generation replaces it.
    private func startTimerTask(generation: UInt64, target: Moment) {
        let task = makeTimerTask(generation: generation, target: target)
        let replaced = state.withLock { state -> Task<Void, Never>? in
            guard state.timer?.generation == generation else { return task }  // already superseded
            defer { state.timerTask = task }
            return state.timerTask
        }
        replaced?.cancel()
    }

    private func makeTimerTask(generation: UInt64, target: Moment) -> Task<Void, Never> {
        Task.detached { [self] in
            var target = target
            while true {
                try? await Task.sleep(until: target.instant, clock: .continuous)
                let (due, next) = state.withLock { state -> ([@Sendable () -> Void], Moment?) in
                    guard state.timer?.generation == generation else { return ([], nil) }
                    let due = state.alarms.takeDue(at: Moment.now())
                    guard let next = state.alarms.earliest() else {
                        state.timer = nil
                        return (due, nil)
                    }
                    state.timer = Timer(generation: generation, target: next)
                    return (due, next)
                }
                for action in due { action() }
                guard let next else { return }
                target = next
            }
        }
    }
}
