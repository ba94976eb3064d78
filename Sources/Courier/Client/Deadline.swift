/// The one mechanism that ends a call at its deadline, for every transport alike.
///
/// The client runs every call's chain under it: queue waiting, every attempt and redirect hop,
/// retry backoff and the body read. When the deadline passes first, the work under the call is
/// cancelled (transports stop their transfer, including a connection attempt still under way) and
/// awaited, and the call fails as ``NetworkError/Kind/timedOut`` in the phase it had reached.
/// Transports also receive the time left (``RequestContext/remaining``) to hand to their library
/// as a backstop, but they decide nothing about the deadline.
///
/// The work runs in one child task (an `async let`, allocated in the caller's task) and the
/// deadline is an alarm on the call's clock that cancels that child: no second task sleeps per
/// call, and a call that finishes first only removes its alarm.
enum Deadline {
    /// Runs `operation`; if `deadline` shows on `clock` first, cancels it, waits for it to stop,
    /// and throws ``NetworkError/Kind/timedOut`` in the phase the recorder shows.
    ///
    /// Cancellation of the calling task cancels `operation` and surfaces as
    /// ``NetworkError/Kind/cancelled``.
    static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        on clock: any TimeSource,
        timeout: Duration,
        recorder: TransferRecorder,
        _ operation: @Sendable () async throws -> T
    ) async throws -> T {
        let alarm = CallAlarm()
        async let outcome = alarm.guarding(operation, until: deadline, on: clock)
        do {
            return try await outcome
        } catch {
            if alarm.rang { throw NetworkError(kind: .timedOut, phase: recorder.phase, message: "the call did not finish within \(timeout)") }
            if Task.isCancelled { throw NetworkError.cancelled(phase: recorder.phase) }
            throw error
        }
    }
}

/// The deadline of one call: an alarm that cancels the task doing the call's work.
///
/// The task is held as an `UnsafeCurrentTask`, which may only be used while the task lives. The
/// task registers itself before its work and unregisters, under the same lock, before it returns;
/// the alarm cancels it only under that lock, so it never touches a finished task. (`cancel()` runs
/// the task's cancellation handlers, Courier's transports' among them, under the lock: none of them
/// takes this lock.)
private final class CallAlarm: Sendable {
    private struct State {
        var task: RunningTask?
        var rang = false
    }

    /// @unchecked Sendable: only used under ``CallAlarm``'s lock, while the task is alive.
    private struct RunningTask: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    private let state = Locked(State())

    /// Whether the deadline passed (and the work was cancelled).
    var rang: Bool { state.withLock { $0.rang } }

    /// Runs `operation` in the current task, cancelling the task if `deadline` comes first.
    func guarding<T: Sendable>(
        _ operation: @Sendable () async throws -> T, until deadline: ContinuousClock.Instant, on clock: any TimeSource
    ) async throws -> T {
        withUnsafeCurrentTask { task in
            state.withLock { $0.task = task.map(RunningTask.init) }
        }
        let alarm = clock.schedule(at: deadline) { [self] in ring() }
        defer {
            state.withLock { $0.task = nil }
            clock.cancelAlarm(alarm)
        }
        return try await operation()
    }

    private func ring() {
        state.withLock { state in
            state.rang = true
            state.task?.task.cancel()
        }
    }
}
