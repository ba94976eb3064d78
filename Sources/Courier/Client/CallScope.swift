import Foundation

/// What a call holds from the start of its network part until its body has been read: its
/// deadline (the signal and the alarm that raises it), and its place among the client's running
/// calls. A buffered call closes it once it has read the body; a streamed call when its caller
/// has read the body, stopped reading or dropped it (see ``StreamedResponse``).
struct CallScope: Sendable {
    let signal: CallDeadline
    let slot: Int
    let alarm: TimeSourceAlarm
    /// When the network part began (for the metrics' network time).
    let networkStart: Moment
    /// The client: its admission, its clock, its body limit.
    let client: NetworkClient
    let timeout: Duration
    let recorder: TransferRecorder

    /// The largest body the call accepts.
    var maxResponseBytes: Int { client.configuration.maxResponseBytes }

    /// Stops the deadline's alarm: the call has its answer (or its failure).
    func disarm() {
        _ = client.configuration.timeSource.cancelAlarm(alarm)
    }

    /// Ends the call: the deadline's handlers (and the transfers they hold) go now, and a graceful
    /// shutdown stops waiting for it. Call it once.
    func close() {
        signal.finish()
        client.admission.leave(slot)
    }

    /// What the call reports for `error` thrown under this scope (a passed deadline is a timeout).
    func failure(_ error: any Error) -> NetworkError {
        Deadline.failure(error, signal: signal, timeout: timeout, recorder: recorder)
    }
}
