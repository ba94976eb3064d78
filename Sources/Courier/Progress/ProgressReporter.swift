/// Where one call reports its ``TransferProgress``: as an `AsyncSequence` (``updates``) or to a
/// handler on the executor the handler is isolated to. Set it as the endpoint's
/// ``Endpoint/progress``.
///
/// ```swift
/// let progress = ProgressReporter { @MainActor update in bar.value = update.fractionReceived ?? 0 }
/// var report = Report(id: 7)
/// report.progress = progress
/// let data = try await client.response(for: report)
/// ```
///
/// Reports are throttled (see ``Throttle``): the first one comes as the call starts, the last one
/// (``TransferProgress/isFinished``) when it ends, successfully or not, and in between at most one
/// per ``Throttle/interval`` and per ``Throttle/fraction`` of the expected bytes. A reader that is
/// slower than the reports gets the latest one: reports are never queued up, and the last one is
/// never dropped. ``updates`` finishes after the last report.
///
/// One reporter belongs to one call (a download counts as one, across its resumptions): a second
/// call given the same reporter fails with ``NetworkError/Kind/invalidRequest`` before it sends
/// anything. An API object cancelled before it started, and an event stream or JSON Lines read
/// (which report no progress), end their reporter at once with an empty last report.
public final class ProgressReporter: Sendable {
    /// How often a call reports.
    public struct Throttle: Sendable, Hashable {
        /// The least time between two reports: 100 ms by default.
        public var interval: Duration
        /// The least change between two reports, as a share of the expected bytes (sent and
        /// received together; an unknown request body length counts as 0): 1% by default.
        /// Ignored while the response's length is unknown.
        public var fraction: Double

        /// A throttle; negative values count as zero (no throttle).
        /// - Parameters:
        ///   - interval: The least time between two reports.
        ///   - fraction: The least change between two reports, as a share of the expected bytes.
        public init(interval: Duration = .milliseconds(100), fraction: Double = 0.01) {
            self.interval = max(.zero, interval)
            self.fraction = fraction.isFinite ? max(0, fraction) : 0
        }
    }

    /// The reports, latest first when the reader falls behind; finishes after the last one. Read
    /// it from one task.
    public let updates: AsyncStream<TransferProgress>
    /// How often the call reports.
    public let throttle: Throttle
    private let continuation: AsyncStream<TransferProgress>.Continuation
    private let claimed = Locked(false)

    /// A reporter read through ``updates``.
    /// - Parameter throttle: How often the call reports; every 100 ms and 1% by default.
    public init(throttle: Throttle = Throttle()) {
        self.throttle = throttle
        (updates, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A reporter that hands each report to `handler`, one at a time and in order, on the
    /// handler's own isolation (for example `@MainActor`). The handler runs in a task of its own,
    /// so a slow handler never slows the call; it skips to the latest report when it falls behind.
    /// - Parameters:
    ///   - throttle: How often the call reports; every 100 ms and 1% by default.
    ///   - handler: Gets each report; keep it short.
    public convenience init(
        throttle: Throttle = Throttle(), _ handler: @escaping @isolated(any) @Sendable (TransferProgress) -> Void
    ) {
        self.init(throttle: throttle)
        let updates = updates
        Task {
            for await update in updates { await handler(update) }
        }
    }

    /// The failure of a call given a reporter another call has already.
    package static let inUse = NetworkError.invalidRequest(
        "the endpoint's progress reporter belongs to another call already; give each call a reporter of its own")

    /// Takes the reporter for one call: `false` when another call has it already.
    package func claim() -> Bool {
        claimed.withLock { taken in
            defer { taken = true }
            return !taken
        }
    }

    /// Ends a reporter no call will report to (its call never started, or reads an event
    /// stream): one finished, empty report, unless a call has it.
    package func finishUnused() {
        if claim() { deliver(TransferProgress(isFinished: true)) }
    }

    /// Hands over a report; the last one finishes ``updates``.
    func deliver(_ progress: TransferProgress) {
        continuation.yield(progress)
        if progress.isFinished { continuation.finish() }
    }

    deinit {
        continuation.finish()
    }
}
