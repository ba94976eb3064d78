/// One call's byte counts, throttled into its ``ProgressReporter`` and added into its batch's
/// total (see ``BatchBytes``): the one place a call's progress is counted. The transport reports
/// the bytes it sent (``RequestContext/reportBytesSent(_:)``), the call the bytes it received.
final class ProgressMeter: Sendable {
    private struct State {
        var progress = TransferProgress()
        /// When the last report went out, and the bytes it had; `nil` before the first.
        var lastReport: ProgressReporter.Throttle.LastReport?
    }

    private let reporter: ProgressReporter?
    private let batch: BatchBytes?
    private let clock: any TimeSource
    private let state: Locked<State>

    init(reporter: ProgressReporter?, batch: BatchBytes?, clock: any TimeSource) {
        self.reporter = reporter
        self.batch = batch
        self.clock = clock
        state = Locked(State())
    }

    /// The call starts sending a body of `length` bytes (`nil` when unknown): the first report.
    func start(sending length: Int64?) {
        change(force: true) { $0.expectedBytesSent = length }
        batch?.add(BatchBytes.Change(expectedSent: length))
    }

    /// The transport has handed `total` bytes of the body to the connection in this attempt.
    func sent(_ total: Int64) {
        change { progress in
            guard total != progress.bytesSent else { return }
            batch?.add(BatchBytes.Change(sent: total - progress.bytesSent))
            progress.bytesSent = total
        }
    }

    /// The final response's body begins, `length` bytes long when announced.
    func startReceiving(length: Int64?) {
        change(force: true) { progress in
            progress.expectedBytesReceived = length
            batch?.add(BatchBytes.Change(expectedReceived: length))
        }
    }

    /// `count` more bytes of the response body arrived (a resumed download counts what it had).
    func received(_ count: Int64) {
        guard count != 0 else { return }
        change { progress in
            progress.bytesReceived += count
            batch?.add(BatchBytes.Change(received: count))
        }
    }

    /// The call has ended: the last report. Later calls change nothing.
    func finish() {
        change(force: true) { $0.isFinished = true }
    }

    private func change(force: Bool = false, _ edit: (inout TransferProgress) -> Void) {
        state.withLock { state in
            guard !state.progress.isFinished else { return }
            edit(&state.progress)
            guard let reporter, reporter.throttle.allows(state.progress, at: clock.now, after: &state.lastReport, force: force) else {
                return
            }
            // Under the lock, so reports from the sending and the receiving side stay in order.
            reporter.deliver(state.progress)
        }
    }

}
