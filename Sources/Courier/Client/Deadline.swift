/// The one mechanism that ends a call at its deadline, for every transport alike.
///
/// The client arms it around every call's network part (inline in `NetworkClient.run`, with no
/// closure, so the call pays no executor hop for it): queue waiting, every attempt and redirect
/// hop, retry backoff and the body read. It sets one alarm on the call's clock; when the alarm
/// rings first, it passes the call's ``CallDeadline``, whose handlers end every wait under the
/// call the way Task cancellation does (transports stop their transfer, including a connection
/// attempt still under way), and the call fails as ``NetworkError/Kind/timedOut`` in the phase it
/// had reached. A call that finishes first only removes its alarm: no task, no timer, no thread
/// hop is added to the call.
///
/// Transports also receive the time left (``RequestContext/remaining``) to hand to their library
/// as a backstop on the real clock; they decide nothing about the deadline.
enum Deadline {
    /// Sets the call's alarm: when `deadline` shows on `clock`, `signal` passes, ending the waits
    /// under the call. Cancel the alarm as soon as the call's network part is over.
    /// `clock` is `nil` for the system clock (``SystemTimeSource``): the alarm goes straight to
    /// the shared watch, with `now`, the instant the client read last, instead of a second read.
    /// Not inlined: what it holds lives on its own stack, not in the async caller's task memory.
    @inline(never)
    static func arm(_ signal: CallDeadline, at deadline: Moment, on clock: (any TimeSource)?, now: Moment) -> TimeSourceAlarm {
        guard let clock else { return DeadlineWatch.shared.schedule(at: deadline, now: now) { signal.pass() } }
        return clock.schedule(at: deadline.instant) { signal.pass() }
    }

    /// What a call reports when its network part threw `error`: ``NetworkError/Kind/timedOut``
    /// in the phase the recorder shows when the deadline passed, ``NetworkError/Kind/cancelled``
    /// when the calling task was cancelled, otherwise the error as a ``NetworkError``.
    static func failure(_ error: any Error, signal: CallDeadline, timeout: Duration, recorder: TransferRecorder) -> NetworkError {
        if signal.hasPassed {
            if signal.passedByShutdown {
                return NetworkError(
                    kind: .shutDown, phase: recorder.phase,
                    message: "the client shut down before the call finished (its grace period ran out)")
            }
            return NetworkError(kind: .timedOut, phase: recorder.phase, message: "the call did not finish within \(timeout)")
        }
        if Task.isCancelled { return NetworkError.cancelled(phase: recorder.phase) }
        return NetworkError.converting(error, phase: recorder.phase)
    }
}
