import Dispatch

/// A batch's bytes, added up from its items' ``ProgressMeter``s as they move, and reported
/// throttled to ``Batch/Callbacks/bytes`` on the batch's callback queue.
///
/// The expected totals are known once every item has announced its length (a request body of
/// known length; a response head with one); an item that failed before its head leaves the
/// expected received total unknown.
final class BatchBytes: Sendable {
    /// What one item's meter adds.
    struct Change {
        var sent: Int64 = 0
        var received: Int64 = 0
        /// An item's request body length, told once as the item starts (`nil`: unknown).
        var expectedSent: Int64?? = .none
        /// An item's response body length, told once as its final head arrives (`nil`: unknown).
        var expectedReceived: Int64?? = .none
    }

    private struct State {
        var progress = TransferProgress()
        var expectedSent: Int64 = 0
        var expectedReceived: Int64 = 0
        var announcedSent = 0
        var announcedReceived = 0
        var unknownSent = false
        var unknownReceived = false
        var lastReport: ProgressReporter.Throttle.LastReport?
    }

    private let items: Int
    private let throttle: ProgressReporter.Throttle
    private let clock: any TimeSource
    private let queue: DispatchQueue
    private let report: @Sendable (TransferProgress) -> Void
    private let state = Locked(State())

    init(
        items: Int, throttle: ProgressReporter.Throttle, clock: any TimeSource, queue: DispatchQueue,
        report: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.items = items
        self.throttle = throttle
        self.clock = clock
        self.queue = queue
        self.report = report
    }

    /// Adds an item's change; reports when the throttle allows.
    func add(_ change: Change) {
        state.withLock { state in
            guard !state.progress.isFinished else { return }
            state.progress.bytesSent += change.sent
            state.progress.bytesReceived += change.received
            if case .some(let length) = change.expectedSent {
                state.announcedSent += 1
                if let length { state.expectedSent += length } else { state.unknownSent = true }
                state.progress.expectedBytesSent = !state.unknownSent && state.announcedSent == items ? state.expectedSent : nil
            }
            if case .some(let length) = change.expectedReceived {
                state.announcedReceived += 1
                if let length { state.expectedReceived += length } else { state.unknownReceived = true }
                state.progress.expectedBytesReceived =
                    !state.unknownReceived && state.announcedReceived == items ? state.expectedReceived : nil
            }
            deliver(&state, force: false)
        }
    }

    /// The batch has ended: the last report.
    func finish() {
        state.withLock { state in
            guard !state.progress.isFinished else { return }
            state.progress.isFinished = true
            deliver(&state, force: true)
        }
    }

    /// The figures now.
    var progress: TransferProgress { state.withLock { $0.progress } }

    private func deliver(_ state: inout State, force: Bool) {
        guard throttle.allows(state.progress, at: clock.now, after: &state.lastReport, force: force) else { return }
        let progress = state.progress
        let report = report
        // Queued under the lock: the callback queue runs the reports in their order.
        queue.async { report(progress) }
    }
}
