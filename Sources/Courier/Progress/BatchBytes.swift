import Dispatch

/// A batch's bytes, added up from its items' ``ProgressMeter``s as they move, and reported
/// throttled to ``Batch/Callbacks/bytes`` on the batch's callback queue.
///
/// The expected totals are known once every item has announced its length, and while none of
/// the lengths is unknown: a request body of known length as the item starts; the response
/// being received's length as its head arrives.
package final class BatchBytes: Sendable {
    /// A change of one item's announced length.
    struct Length {
        /// Whether the item announces it for the first time.
        var first: Bool
        /// What it announced before (when not `first`).
        var previous: Int64?
        /// What it announces now; `nil` when unknown.
        var now: Int64?
    }

    /// What one item's meter adds.
    struct Change {
        var sent: Int64 = 0
        var received: Int64 = 0
        var expectedSent: Length? = nil
        var expectedReceived: Length? = nil
    }

    /// The sum of one kind of announced length over the items.
    private struct Lengths {
        var sum: Int64 = 0
        var announced = 0
        var unknown = 0

        mutating func apply(_ change: Length) {
            if change.first {
                announced += 1
            } else if let previous = change.previous {
                sum &-= previous
            } else {
                unknown -= 1
            }
            if let now = change.now { sum &+= now } else { unknown += 1 }
        }

        func total(items: Int) -> Int64? { announced == items && unknown == 0 ? sum : nil }
    }

    private struct State {
        var progress: TransferProgress
        var sent = Lengths()
        var received = Lengths()
        var lastReport: ProgressReporter.Throttle.LastReport?
    }

    private let items: Int
    private let throttle: ProgressReporter.Throttle
    private let clock: any TimeSource
    private let queue: DispatchQueue
    private let report: @Sendable (TransferProgress) -> Void
    private let state: Locked<State>

    init(
        items: Int, throttle: ProgressReporter.Throttle, clock: any TimeSource, queue: DispatchQueue,
        report: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.items = items
        self.throttle = throttle
        self.clock = clock
        self.queue = queue
        self.report = report
        // An empty batch expects nothing.
        let none: Int64? = items == 0 ? 0 : nil
        state = Locked(State(progress: TransferProgress(expectedBytesSent: none, expectedBytesReceived: none)))
    }

    /// Adds an item's change; reports when the throttle allows.
    func add(_ change: Change) {
        state.withLock { state in
            guard !state.progress.isFinished else { return }
            state.progress.bytesSent &+= change.sent
            state.progress.bytesReceived &+= change.received
            if let length = change.expectedSent {
                state.sent.apply(length)
                state.progress.expectedBytesSent = state.sent.total(items: items)
            }
            if let length = change.expectedReceived {
                state.received.apply(length)
                state.progress.expectedBytesReceived = state.received.total(items: items)
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

    private func deliver(_ state: inout State, force: Bool) {
        guard throttle.allows(state.progress, at: clock.now, after: &state.lastReport, force: force) else { return }
        let progress = state.progress
        let report = report
        // Queued under the lock: the callback queue runs the reports in their order.
        queue.async { report(progress) }
    }
}
