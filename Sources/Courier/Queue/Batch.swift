import Dispatch

/// A set of API objects run through a ``RequestQueue`` as one unit, with a callback per item and
/// one when the whole batch has finished: the ASINetworkQueue model.
///
/// ```swift
/// let batch = Batch(ids.map { GetImage(client: client, id: $0) }, queue: images)
/// batch.callbacks.progress = { print("\($0.finished)/\($0.total)") }
/// try batch.start { results in … }            // completion handler, results in input order
/// let results = try await Batch(…).run()       // or async/await
/// ```
///
/// - Every item gets exactly one of ``Callbacks/itemSucceeded`` or ``Callbacks/itemFailed``
///   (a cancelled item fails with ``NetworkError/Kind/cancelled``), each followed by
///   ``Callbacks/progress``; ``Callbacks/itemStarted`` comes before them when the item left the
///   queue. The completion comes once, after every item callback, with every item's result in
///   input order. All callbacks run one at a time, in that order, on `callbackQueue`.
/// - ``FailurePolicy/continueOnFailure`` (the default) runs every item;
///   ``FailurePolicy/cancelRemaining`` cancels the unfinished items on the first failure.
/// - ``cancel()`` cancels every unfinished item; so does ``RequestQueue/cancelAll(_:)`` with
///   ``CallGroup/batch(_:)`` and ``id``.
/// - Items run in the batch's queue whatever queue they name themselves. A batch, like its items,
///   is single use. An empty batch completes at once.
public final class Batch<Output: Sendable>: Sendable {
    /// What happens to the other items when one fails.
    public enum FailurePolicy: Sendable, Hashable {
        /// Every item runs; failures are reported per item. The default.
        case continueOnFailure
        /// The first failure cancels every item that has not finished.
        case cancelRemaining
    }

    /// How far the batch is.
    public struct Progress: Sendable, Hashable {
        /// Items finished (succeeded or failed).
        public var finished: Int
        /// Items in the batch.
        public var total: Int
        /// Items that failed (cancelled ones included).
        public var failed: Int
        /// Response body bytes received by the finished items. (``Callbacks/bytes`` counts the
        /// running items' bytes too, as they move.)
        public var bytesReceived: Int64
        /// `finished / total`, between 0 and 1 (1 for an empty batch).
        public var fraction: Double { total == 0 ? 1 : Double(finished) / Double(total) }
    }

    /// The per-item callbacks. Set them before ``start(completion:)``.
    public struct Callbacks: Sendable {
        /// An item left the queue (its index).
        public var itemStarted: (@Sendable (Int) -> Void)?
        /// An item succeeded (its index and output).
        public var itemSucceeded: (@Sendable (Int, Output) -> Void)?
        /// An item failed (its index and error).
        public var itemFailed: (@Sendable (Int, NetworkError) -> Void)?
        /// After each item's own callback.
        public var progress: (@Sendable (Progress) -> Void)?
        /// The whole batch's bytes sent and received, running items included, as they move:
        /// throttled by ``Batch/bytesThrottle``, the last report (``TransferProgress/isFinished``)
        /// before the last item's callbacks and the completion. The expected totals are known once every item has
        /// announced its lengths. Setting it makes every item count its bytes, and never share an
        /// identical call's transfer.
        public var bytes: (@Sendable (TransferProgress) -> Void)?

        /// No callbacks.
        public init() {}
    }

    /// Identifies the batch for ``RequestQueue/cancelAll(_:)``.
    public let id = BatchID.next()
    /// The items, in input order.
    public let items: [BaseAPI<Output>]
    /// The queue the items run in.
    public let queue: RequestQueue
    /// What a failure does to the other items.
    public let failurePolicy: FailurePolicy

    /// How often ``Callbacks/bytes`` reports: every 100 ms and 1% by default, on the queue's clock.
    public let bytesThrottle: ProgressReporter.Throttle

    private let callbackQueue: DispatchQueue

    private struct State {
        var callbacks = Callbacks()
        var started = false
        var itemStarted: [Bool]
        var results: [Result<Output, NetworkError>?]
        var finished = 0
        var failed = 0
        var bytesReceived: Int64 = 0
        var cancelling = false
        var completion: (@Sendable ([Result<Output, NetworkError>]) -> Void)?
        /// The byte total, when ``Callbacks/bytes`` is set.
        var bytes: BatchBytes?

        init(count: Int) {
            itemStarted = Array(repeating: false, count: count)
            results = Array(repeating: nil, count: count)
        }
    }

    private let state: Locked<State>

    /// Creates a batch; nothing starts before ``start(completion:)`` or ``run()``.
    /// - Parameters:
    ///   - items: The API objects, not started yet.
    ///   - queue: The queue they run in (its limits and priority apply).
    ///   - failurePolicy: `continueOnFailure` by default.
    ///   - callbackQueue: Where callbacks and the completion run (one at a time); the global queue by default.
    ///   - bytesThrottle: How often ``Callbacks/bytes`` reports.
    public init(
        _ items: [BaseAPI<Output>], queue: RequestQueue, failurePolicy: FailurePolicy = .continueOnFailure,
        callbackQueue: DispatchQueue = .global(), bytesThrottle: ProgressReporter.Throttle = ProgressReporter.Throttle()
    ) {
        self.items = items
        self.queue = queue
        self.failurePolicy = failurePolicy
        self.bytesThrottle = bytesThrottle
        self.callbackQueue = DispatchQueue(label: "courier.batch", target: callbackQueue)
        state = Locked(State(count: items.count))
    }

    /// The per-item callbacks; changing them after the start has no effect.
    public var callbacks: Callbacks {
        get { state.withLock { $0.callbacks } }
        set { state.withLock { if !$0.started { $0.callbacks = newValue } } }
    }

    /// How far the batch is now.
    public var progress: Progress {
        state.withLock { Progress(finished: $0.finished, total: items.count, failed: $0.failed, bytesReceived: $0.bytesReceived) }
    }

    /// Starts every item; `completion` gets every result in input order once all have finished.
    /// - Parameter completion: Called once, after every item callback.
    /// - Throws: ``NetworkError/Kind/alreadyStarted`` when the batch was started before.
    public func start(completion: @escaping @Sendable ([Result<Output, NetworkError>]) -> Void) throws(NetworkError) {
        let accepted = state.withLock { state -> BatchBytes?? in
            guard !state.started else { return .none }
            state.started = true
            state.completion = completion
            if let report = state.callbacks.bytes {
                state.bytes = BatchBytes(
                    items: items.count, throttle: bytesThrottle, clock: queue.timeSource, queue: callbackQueue, report: report)
            }
            return .some(state.bytes)
        }
        guard case .some(let bytes) = accepted else {
            throw NetworkError(kind: .alreadyStarted, phase: .building, message: "the batch is single use and was already started")
        }
        if items.isEmpty {
            bytes?.finish()
            callbackQueue.async { completion([]) }
            return
        }
        for (index, item) in items.enumerated() {
            let placement = AssignedQueue(queue: queue, batch: id, onStart: { [weak self] in self?.started(index) }, bytes: bytes)
            do {
                try item.start(in: placement) { [self] result in finished(index, result) }
            } catch {
                finished(index, .failure(error))
            }
        }
    }

    /// Starts every item and waits for every result, in input order. Cancelling the calling task
    /// cancels the batch.
    /// - Returns: Every item's result, in input order.
    /// - Throws: ``NetworkError/Kind/alreadyStarted`` when the batch was started before.
    public func run() async throws(NetworkError) -> [Result<Output, NetworkError>] {
        let outcome: Result<[Result<Output, NetworkError>], NetworkError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                do throws(NetworkError) {
                    try start { continuation.resume(returning: .success($0)) }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            cancel()
        }
        return try outcome.get()
    }

    /// Cancels every item that has not finished. Idempotent.
    ///
    /// Items still waiting for a slot are cancelled before running ones: a running item that is
    /// cancelled frees its slot, and the queue must not hand it to an item about to be cancelled.
    public func cancel() {
        let unfinished = state.withLock { state -> [BaseAPI<Output>] in
            state.cancelling = true
            let open = items.indices.filter { state.results[$0] == nil }
            let waiting = open.filter { !state.itemStarted[$0] }
            let running = open.filter { state.itemStarted[$0] }
            return (waiting + running).map { items[$0] }
        }
        for item in unfinished { item.cancel() }
    }

    private func started(_ index: Int) {
        let callback = state.withLock { state -> (@Sendable (Int) -> Void)? in
            guard !state.itemStarted[index], state.results[index] == nil else { return nil }
            state.itemStarted[index] = true
            return state.callbacks.itemStarted
        }
        guard let callback else { return }
        callbackQueue.async { callback(index) }
    }

    private func finished(_ index: Int, _ result: Result<Output, NetworkError>) {
        let bytes = items[index].metrics?.bytesReceived ?? 0
        let update = state.withLock {
            state -> (Callbacks, Progress, (@Sendable ([Result<Output, NetworkError>]) -> Void)?, [Result<Output, NetworkError>], Bool)? in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.finished += 1
            state.bytesReceived += bytes
            var cancelRest = false
            if case .failure(let error) = result {
                state.failed += 1
                if failurePolicy == .cancelRemaining, !state.cancelling, error.kind != .cancelled {
                    state.cancelling = true
                    cancelRest = true
                }
            }
            let progress = Progress(finished: state.finished, total: items.count, failed: state.failed, bytesReceived: state.bytesReceived)
            var completion: (@Sendable ([Result<Output, NetworkError>]) -> Void)?
            var results: [Result<Output, NetworkError>] = []
            if state.finished == items.count {
                completion = state.completion
                state.completion = nil
                results = state.results.compactMap { $0 }
                // Queued on the callback queue before this item's callbacks and the completion.
                state.bytes?.finish()
            }
            return (state.callbacks, progress, completion, results, cancelRest)
        }
        // A second result for the same item (impossible by BaseAPI's contract) is dropped.
        guard let (callbacks, progress, completion, results, cancelRest) = update else { return }
        callbackQueue.async {
            switch result {
            case .success(let output): callbacks.itemSucceeded?(index, output)
            case .failure(let error): callbacks.itemFailed?(index, error)
            }
            callbacks.progress?(progress)
            completion?(results)
        }
        if cancelRest { cancel() }
    }
}
