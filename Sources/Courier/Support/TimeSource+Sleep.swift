extension TimeSource {
    /// Suspends until this clock shows `instant`: an alarm that resumes the task.
    ///
    /// Retry backoff, `Retry-After` and the mock's delays wait here, so a test with a
    /// ``ManualTimeSource`` moves them by advancing it.
    /// - Parameter instant: The instant to wait for; one already passed returns at once.
    /// - Returns: `true` when the instant came, `false` when the task was cancelled first.
    public func sleep(until instant: ContinuousClock.Instant) async -> Bool {
        let sleeper = AlarmSleeper()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                guard sleeper.wait(continuation) else { return continuation.resume(returning: false) }
                let alarm = schedule(at: instant) { sleeper.wake() }
                if !sleeper.keep(alarm) { cancelAlarm(alarm) }
            }
        } onCancel: {
            if let alarm = sleeper.cancel() { cancelAlarm(alarm) }
        }
    }
}

/// One sleeping task: its continuation and its alarm, resumed exactly once (by the alarm or by
/// cancellation, whichever comes first).
private final class AlarmSleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var alarm: TimeSourceAlarm?
        var cancelled = false
    }

    private let state = Locked(State())

    /// Stores the continuation; `false` when the task was cancelled before.
    func wait(_ continuation: CheckedContinuation<Bool, Never>) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.continuation = continuation
            return true
        }
    }

    /// Remembers the alarm for cancellation; `false` when the task was cancelled meanwhile (the
    /// caller then cancels the alarm itself).
    func keep(_ alarm: TimeSourceAlarm) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.alarm = alarm
            return true
        }
    }

    /// The alarm rang.
    func wake() {
        state.withLock { $0.continuation.take() }?.resume(returning: true)
    }

    /// The task was cancelled: resumes it with `false` and returns the alarm to cancel, if any.
    func cancel() -> TimeSourceAlarm? {
        let (continuation, alarm) = state.withLock { state in
            state.cancelled = true
            return (state.continuation.take(), state.alarm.take())
        }
        continuation?.resume(returning: false)
        return alarm
    }
}

extension RequestContext {
    /// Waits on the call's ``clock`` until `instant`, for a link or a transport that waits out a
    /// time of its own: it ends early when the task is cancelled, when the call's deadline
    /// passes, or when its client's graceful shutdown ends the call.
    /// - Parameter instant: When to wake.
    /// - Returns: `true` when `instant` came; `false` when the wait was ended early.
    public func sleep(until instant: ContinuousClock.Instant) async -> Bool {
        let sleeper = AlarmSleeper()
        let clock = self.clock
        return await withCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                guard sleeper.wait(continuation) else { return continuation.resume(returning: false) }
                let alarm = clock.schedule(at: instant) { sleeper.wake() }
                if !sleeper.keep(alarm) { clock.cancelAlarm(alarm) }
            }
        } onCancel: {
            if let alarm = sleeper.cancel() { clock.cancelAlarm(alarm) }
        }
    }
}
