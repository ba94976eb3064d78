import Foundation

/// One call's byte counts, throttled into its ``ProgressReporter`` and added into its batch's
/// total (see ``BatchBytes``): the one place a call's progress is counted. The transport reports
/// the bytes it sent (``RequestContext/reportBytesSent(_:)``); the chain's attempt counts each
/// response's body as it arrives (``counting(_:announced:)``).
package final class ProgressMeter: Sendable {
    private struct State {
        var progress = TransferProgress()
        var lastReport: ProgressReporter.Throttle.LastReport?
        /// Whether the lengths were announced yet (the batch counts each call's once).
        var announcedSent = false
        var announcedReceived = false
    }

    /// The largest length taken as announced: a larger one (a hostile `Content-Length`) counts
    /// as unknown, so sums over a batch can never overflow.
    static let largestLength: Int64 = 1 << 40

    private let reporter: ProgressReporter?
    private let batch: BatchBytes?
    private let clock: any TimeSource
    private let state = Locked(State())

    package init(reporter: ProgressReporter?, batch: BatchBytes?, clock: any TimeSource) {
        self.reporter = reporter
        self.batch = batch
        self.clock = clock
    }

    /// A length as the meter takes it: `nil` when unknown, negative or implausibly large.
    static func plausible(_ length: Int64?) -> Int64? {
        length.flatMap { (0...largestLength).contains($0) ? $0 : nil }
    }

    /// The call starts sending a body of `length` bytes (`nil` when unknown): the first report.
    package func start(sending length: Int64?) {
        let length = Self.plausible(length)
        change(force: true) { state in
            batch?.add(
                BatchBytes.Change(expectedSent: .init(first: !state.announcedSent, previous: state.progress.expectedBytesSent, now: length))
            )
            state.announcedSent = true
            state.progress.expectedBytesSent = length
        }
    }

    /// The transport has handed `total` bytes of the body to the connection in this attempt (0
    /// as each attempt starts).
    func sent(_ total: Int64) {
        change { state in
            guard total != state.progress.bytesSent else { return }
            batch?.add(BatchBytes.Change(sent: total - state.progress.bytesSent))
            state.progress.bytesSent = total
        }
    }

    /// A response's body begins, `length` bytes long when announced: the count starts over (a
    /// redirect's or a failed attempt's body is not the call's), and `body` comes back counted.
    package func counting(_ body: ResponseBody, announced length: Int64?) -> ResponseBody {
        startReceiving(length: length)
        if let data = try? body.bufferedBytes(upTo: Int.max) {
            received(Int64(data.count))
            return body
        }
        return ResponseBody(source: CountedBody(body, meter: self), expectedLength: body.expectedLength)
    }

    /// A response's body begins, `length` bytes long when announced: the count starts over, from
    /// `kept` (the bytes a resumed download keeps).
    package func startReceiving(length: Int64?, kept: Int64 = 0) {
        let length = Self.plausible(length)
        change(force: true) { state in
            batch?.add(
                BatchBytes.Change(
                    received: kept - state.progress.bytesReceived,
                    expectedReceived: .init(first: !state.announcedReceived, previous: state.progress.expectedBytesReceived, now: length)))
            state.announcedReceived = true
            state.progress.bytesReceived = kept
            state.progress.expectedBytesReceived = length
        }
    }

    /// `count` more bytes of the response body arrived (or, negative, were taken back).
    package func received(_ count: Int64) {
        guard count != 0 else { return }
        change { state in
            state.progress.bytesReceived += count
            batch?.add(BatchBytes.Change(received: count))
        }
    }

    /// The call has ended: the last report. Later calls change nothing. A length the call never
    /// announced (it ended before sending, or without a response from the network: a failure, a
    /// cache hit) counts as 0 in its batch's total.
    package func finish() {
        change(force: true) { state in
            if !state.announcedSent { batch?.add(BatchBytes.Change(expectedSent: .init(first: true, previous: nil, now: 0))) }
            if !state.announcedReceived { batch?.add(BatchBytes.Change(expectedReceived: .init(first: true, previous: nil, now: 0))) }
            state.progress.isFinished = true
        }
    }

    /// Applies `edit` and reports when the throttle allows, or always when `force` is set or a
    /// side has just reached its expected length (a finished upload is never held back).
    private func change(force: Bool = false, _ edit: (inout State) -> Void) {
        state.withLock { state in
            guard !state.progress.isFinished else { return }
            let before = state.progress
            edit(&state)
            let after = state.progress
            let completes =
                (after.bytesSent != before.bytesSent && after.bytesSent == after.expectedBytesSent)
                || (after.bytesReceived != before.bytesReceived && after.bytesReceived == after.expectedBytesReceived)
            guard let reporter,
                reporter.throttle.allows(after, at: clock.now, after: &state.lastReport, force: force || completes)
            else { return }
            // Under the lock, so reports from the sending and the receiving side stay in order.
            reporter.deliver(after)
        }
    }
}

/// A response body counted into a ``ProgressMeter`` chunk by chunk, as the reader pulls it.
/// `@unchecked Sendable`: one reader at a time (see ``ResponseBodySource``); releasing it releases
/// the transport's body, which stops the transfer.
final class CountedBody: ResponseBodySource, @unchecked Sendable {
    private var iterator: ResponseBody.AsyncIterator
    private let meter: ProgressMeter

    init(_ body: ResponseBody, meter: ProgressMeter) {
        iterator = body.makeAsyncIterator()
        self.meter = meter
    }

    func next() async throws -> Data? {
        guard let chunk = try await iterator.next() else { return nil }
        meter.received(Int64(chunk.count))
        return chunk
    }
}
