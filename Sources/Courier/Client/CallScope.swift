import Foundation

/// What a call holds from the start of its network part until its body has been read: its
/// deadline (the signal, whose record also holds the alarm that raises it and the call's place
/// among the client's running calls, ``CallLifecycle/Holdings``). A buffered call ends it once it
/// has read the body; a streamed call when its caller has read the body, stopped reading or
/// dropped it (see ``StreamedResponse``).
///
/// ``end()`` is the one place a call ends: the first call releases what the record says the call
/// holds (through the call's ``CallLifecycle``, which says "first" under the record's lock), any
/// later one does nothing.
struct CallScope: Sendable {
    let signal: CallDeadline
    /// When the network part began (for the metrics' network time).
    let networkStart: Moment
    let admission: CallAdmission
    let clock: any TimeSource
    let timeout: Duration
    let recorder: TransferRecorder
    /// The largest body the call accepts (its context's).
    let maxResponseBytes: Int

    /// The scope of `call`, opened with `signal` (already admitted) at `networkStart`.
    init(_ call: Call, signal: CallDeadline, networkStart: Moment) {
        // `CallDeadline.never` never ends, so a scope on it would never leave its place.
        assert(!signal.isNever, "a call's scope needs the call's own deadline")
        self.signal = signal
        self.networkStart = networkStart
        admission = call.client.admission
        clock = call.context.clock
        timeout = call.settings.timeout
        recorder = call.context.recorder
        maxResponseBytes = call.context.maxResponseBytes
    }

    /// Stops the deadline's alarm before the call ends: a long transfer's body goes on under its
    /// own bounds (``BodyWatch``). Idempotent.
    func disarm() {
        if let alarm = signal.alarm { _ = clock.cancelAlarm(alarm) }
    }

    /// Ends the call, once whatever the number of calls: the deadline's alarm goes, the deadline's
    /// handlers (and the transfers they hold) are dropped, and a graceful shutdown stops waiting
    /// for it.
    func end() {
        guard let released = signal.end(), let holdings = released else { return }
        _ = clock.cancelAlarm(holdings.alarm)
        admission.leave(holdings.slot)
    }

    /// What the call reports for `error` thrown under this scope (a passed deadline is a timeout).
    func failure(_ error: any Error) -> NetworkError {
        Deadline.failure(error, signal: signal, timeout: timeout, recorder: recorder)
    }
}
