import Foundation

/// What a call's phases share from the start of its network part until its body has been read:
/// its owner (``RunningCall``, which holds the deadline, its alarm and the call's place among the
/// client's running calls), when the network part began, and what its failures are judged by.
/// A buffered call ends it once it has read the body; a streamed call when its caller has read
/// the body, stopped reading or dropped it (see ``StreamedResponse``).
///
/// ``end()`` ends the call through its owner, the one place a call ends (``RunningCall/end()``):
/// the first end releases what the record says the call holds, any later one does nothing.
struct CallScope: Sendable {
    let call: RunningCall
    /// When the network part began (for the metrics' network time).
    let networkStart: Moment
    let timeout: Duration
    /// The largest body the call accepts (its context's).
    let maxResponseBytes: Int

    /// The scope of `call`, opened (already admitted) at `networkStart`.
    init(_ call: Call, networkStart: Moment) {
        self.call = call.context.call
        self.networkStart = networkStart
        timeout = call.settings.timeout
        maxResponseBytes = call.context.maxResponseBytes
    }

    /// The call's deadline signal.
    var signal: CallDeadline { call.deadline }

    /// Stops the deadline's alarm before the call ends: a long transfer's body goes on under its
    /// own bounds (``BodyWatch``). Idempotent.
    func disarm() { call.disarm() }

    /// Ends the call, once whatever the number of calls: the deadline's alarm goes, the deadline's
    /// handlers (and the transfers they hold) are dropped, and a graceful shutdown stops waiting
    /// for it.
    func end() { call.end() }

    /// What the call reports for `error` thrown under this scope (a passed deadline is a timeout).
    func failure(_ error: any Error) -> NetworkError {
        Deadline.failure(error, signal: signal, timeout: timeout, recorder: TransferRecorder(call))
    }
}
