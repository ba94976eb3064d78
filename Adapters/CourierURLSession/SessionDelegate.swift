import Courier
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the delegate knows about one task.
struct TaskState {
    /// The task, held until it ends (weakly: the session frees it).
    weak var task: URLSessionTask?
    let recorder: TransferRecorder
    let maxResponseBytes: Int
    /// A temporary file holding the request body, removed when the task ends.
    let stagedBody: URL?

    /// The caller waiting for the response head, resumed once by whoever comes first.
    let waiter: HeadWaiter
    /// The most body bytes delivered but not yet read (FoundationNetworking cannot pause a task).
    let maxUnreadBytes: Int
    /// Where body chunks go once the head was delivered.
    var body: AsyncThrowingStream<Data, any Error>.Continuation?
    /// What the reader took, so that the bytes waiting for it stay under ``maxUnreadBytes``. (Only
    /// the count: the reader's iterator belongs to the body, whose release stops the transfer.)
    var taken: ByteTally?
    var receivedHead = false
    var receivedBytes = 0
    /// The body length the head announced, if any: an error before that many bytes arrived is a
    /// connection that closed mid-body, whatever code FoundationNetworking gives it.
    var announcedBytes: Int64?
    /// Set when Courier itself stopped the task (too large, malformed head): reported instead
    /// of URLSession's "cancelled".
    var failure: NetworkError?

    init(recorder: TransferRecorder, maxResponseBytes: Int, maxUnreadBytes: Int, stagedBody: URL?, waiter: HeadWaiter) {
        self.waiter = waiter
        self.recorder = recorder
        self.maxResponseBytes = maxResponseBytes
        self.maxUnreadBytes = max(URLSessionTransport.Configuration.minUnreadBytes, maxUnreadBytes)
        self.stagedBody = stagedBody
    }
}

/// A count of bytes shared between a body's reader and the delegate.
final class ByteTally: Sendable {
    private let count = Atomic<Int64>(0)

    var value: Int64 { count.load(ordering: .relaxed) }

    func add(_ bytes: Int64) { count.add(bytes, ordering: .relaxed) }
}

/// The reader's side of a body: passes the chunks on and counts the bytes taken in `taken`, which
/// the delegate compares with the bytes delivered. Held by the body alone: releasing it releases
/// the delivered stream's iterator, which stops the transfer.
final class BodyReadCounter: @unchecked Sendable {
    // Only the one reader calls `next()` (a body is read once).
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private let taken: ByteTally

    init(_ stream: AsyncThrowingStream<Data, any Error>, taken: ByteTally) {
        iterator = stream.makeAsyncIterator()
        self.taken = taken
    }

    func next() async throws -> Data? {
        let chunk = try await iterator.next()
        if let chunk { taken.add(Int64(chunk.count)) }
        return chunk
    }
}

/// The caller of one call, waiting for its response head: resumed exactly once, by the response,
/// by the task's end, or at once by a deadline, a cancel or a shutdown, even while
/// FoundationNetworking's queue holds the task up.
final class HeadWaiter: Sendable {
    private enum Slot {
        case empty
        case waiting(CheckedContinuation<TransportResponse, any Error>)
        /// Failed before the caller waited: it is resumed with this when it does.
        case failed(any Error)
        case resumed
    }
    private let slot = Locked(Slot.empty)

    /// The caller starts waiting; resumed at once if the call already failed.
    func wait(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        let early: (any Error)? = slot.withLock { slot in
            guard case .failed(let error) = slot else {
                slot = .waiting(continuation)
                return nil
            }
            slot = .resumed
            return error
        }
        if let early { continuation.resume(throwing: early) }
    }

    /// Resumes the caller with `outcome`, unless it was resumed already.
    func resume(with outcome: Result<TransportResponse, any Error>) {
        let waiting: CheckedContinuation<TransportResponse, any Error>? = slot.withLock { slot in
            switch slot {
            case .waiting(let continuation):
                slot = .resumed
                return continuation
            case .empty:
                if case .failure(let error) = outcome { slot = .failed(error) }
                return nil
            case .failed, .resumed:
                return nil
            }
        }
        waiting?.resume(with: outcome)
    }
}

/// The task of one call, from the moment the call asks for it: a cancel or a deadline that comes
/// before the task is made is kept, and the task is stopped as soon as it is made.
final class PendingTask: @unchecked Sendable {
    // @unchecked Sendable: the task and the reason are behind the lock.
    private struct Slot {
        weak var task: URLSessionTask?
        /// Set once the call was stopped: `.some(nil)` for a plain cancel.
        var stop: NetworkError??
    }
    private let slot = Locked(Slot())
    /// The call's caller.
    let waiter = HeadWaiter()

    /// Records the made task; the reason to stop it at once if the call was stopped before.
    func made(_ task: URLSessionTask) -> NetworkError?? {
        slot.withLock { slot in
            slot.task = task
            return slot.stop
        }
    }

    /// Why the call was stopped, if it was: `.some(nil)` for a plain cancel.
    var stopped: NetworkError?? { slot.withLock { $0.stop } }

    /// Records that the call is to stop; the task, if it was made and is still alive.
    func stop(because reason: NetworkError?) -> URLSessionTask? {
        slot.withLock { slot in
            if slot.stop == nil { slot.stop = .some(reason) }
            // `nil` until made, and once freed.
            return slot.task
        }
    }
}

/// The session's delegate: routes URLSession's callbacks to the task they belong to.
///
/// Callbacks arrive on the transport's serial queue, where tasks are also made and cancelled;
/// calls from other threads reach a task only through that queue (``stopSoon(_:because:)``). All
/// state is behind one lock, and no continuation is resumed under it.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: NSObject subclasses cannot be checked; the state is `tasks`, behind a
    // lock, and the queue.
    private let tasks = Locked<[Int: TaskState]>([:])
    /// The transport's serial queue (see `URLSessionTransport`).
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Files a task made on the queue.
    func register(_ task: URLSessionTask, _ state: TaskState) {
        var state = state
        state.task = task
        tasks.withLock { [state] in $0[task.taskIdentifier] = state }
    }

    /// Stops a call's task from any thread: on the queue, and only while the task has not ended.
    /// FoundationNetworking's `cancel()` waits on its work queue, and a cancel that lands after
    /// the task left its registry traps there; on the queue the callbacks arrive on, "not ended"
    /// is what the delegate was told. A task not made yet is stopped when it is made.
    /// - Parameters:
    ///   - pending: The call's task.
    ///   - reason: Courier's own reason, reported instead of "cancelled"; `nil` for a cancel.
    ///   - failure: What the caller gets: `reason`, or the cancel as an error.
    ///
    /// The caller (waiting for the head, or reading the body) gets `failure` at once, not when
    /// FoundationNetworking gets round to the cancel.
    func stopSoon(_ pending: PendingTask, because reason: NetworkError?, failure: NetworkError) {
        pending.waiter.resume(with: .failure(failure))
        guard let task = pending.stop(because: reason) else { return }
        let body = tasks.withLock { tasks -> AsyncThrowingStream<Data, any Error>.Continuation? in
            guard var state = tasks[task.taskIdentifier] else { return nil }
            if let reason, state.failure == nil { state.failure = reason }
            tasks[task.taskIdentifier] = state
            return state.body
        }
        body?.finish(throwing: failure)
        cancelSoon(task, because: reason)
    }

    private func cancelSoon(_ task: URLSessionTask, because reason: NetworkError?) {
        queue.async { [weak self, weak task] in
            guard let self, let task, self.tasks.withLock({ $0[task.taskIdentifier] != nil }) else { return }
            self.stop(task, because: reason)
        }
    }

    /// Fails every call in flight and cancels its task (the transport is shutting down). Runs on
    /// the queue.
    func closeAll() {
        let ended: [TaskState] = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return Array(tasks.values)
        }
        // Every caller first, then the cancels: each waits on FoundationNetworking's queue.
        for state in ended {
            if let file = state.stagedBody { try? FileManager.default.removeItem(at: file) }
            state.waiter.resume(with: .failure(Self.shutDown(state)))
            state.body?.finish(throwing: Self.shutDown(state))
        }
        for state in ended { state.task?.cancel() }
    }

    private static func shutDown(_ state: TaskState) -> NetworkError {
        NetworkError(kind: .cancelled, phase: state.recorder.phase, message: "the URLSession transport was shut down")
    }

    /// FoundationNetworking turns a 401 with a challenge it understands into this call once the
    /// whole response has arrived, and completes the task only when the challenge is answered
    /// (its default handling waits forever; a credential resends the request, or traps for a
    /// scheme it cannot answer). Courier hands the 401 to the caller as it came, whatever the
    /// scheme: its own middleware decides what to do with it.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        finish(task, error: nil)
        // The task then completes as cancelled, and finds no state.
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            stop(dataTask, because: NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: "the response is not HTTP"))
            completionHandler(.cancel)
            return
        }
        if (100..<200).contains(http.statusCode) {
            // FoundationNetworking hands over an interim response as if it were the final one and
            // then never completes the task: fail now, clearly, instead of at the deadline.
            stop(dataTask, because: URLSessionConversion.interimResponseUnsupported(status: http.statusCode))
            completionHandler(.cancel)
            return
        }
        // The size limits and Content-Length are checked by the chain, as for every transport.
        let head: HTTPResponse
        switch URLSessionConversion.responseHead(from: http) {
        case .success(let converted): head = converted
        case .failure(let problem):
            stop(dataTask, because: problem)
            completionHandler(.cancel)
            return
        }
        let announced = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
        let (delivered, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
        continuation.onTermination = { [weak self, weak dataTask] termination in
            // The consumer stopped reading (cancelled or dropped the body): stop the transfer.
            if case .cancelled = termination, let dataTask { self?.cancelSoon(dataTask, because: nil) }
        }
        let taken = ByteTally()
        let (waiter, tooLarge, countsReads): (HeadWaiter?, NetworkError?, Bool) = tasks.withLock { tasks in
            guard var state = tasks[dataTask.taskIdentifier] else { return (nil, nil, false) }
            if let announced, announced > state.maxResponseBytes {
                let error = NetworkError.responseTooLarge(limit: state.maxResponseBytes, announced: announced)
                state.failure = error
                tasks[dataTask.taskIdentifier] = state
                return (nil, error, false)
            }
            state.receivedHead = true
            state.announcedBytes = announced
            state.body = continuation
            // Reads are counted only where the read-ahead is below the body's cap (a streamed
            // body): elsewhere the cap stops the transfer first.
            let countsReads = state.maxUnreadBytes < state.maxResponseBytes
            if countsReads { state.taken = taken }
            state.recorder.enter(.receiving)
            tasks[dataTask.taskIdentifier] = state
            return (state.waiter, nil, countsReads)
        }
        if tooLarge != nil {
            continuation.finish()
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        var stream = delivered
        if countsReads {
            let reader = BodyReadCounter(delivered, taken: taken)
            stream = AsyncThrowingStream { try await reader.next() }
        }
        waiter?.resume(with: .success(TransportResponse(head: head, body: ResponseBody(stream: stream, expectedLength: announced))))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (body, overLimit): (AsyncThrowingStream<Data, any Error>.Continuation?, Bool) = tasks.withLock { tasks in
            guard var state = tasks[dataTask.taskIdentifier] else { return (nil, false) }
            guard state.failure == nil else { return (nil, false) }  // stopped: later chunks are dropped
            state.receivedBytes += data.count
            let unread = state.receivedBytes - Int(state.taken?.value ?? 0)
            if state.receivedBytes > state.maxResponseBytes || unread > state.maxUnreadBytes {
                // Cancelled once; the reader still gets what was delivered, then this failure.
                state.failure =
                    state.receivedBytes > state.maxResponseBytes
                    ? NetworkError.responseTooLarge(limit: state.maxResponseBytes, announced: nil)
                    : Self.fellBehind(unread: unread, limit: state.maxUnreadBytes)
                tasks[dataTask.taskIdentifier] = state
                return (nil, true)
            }
            tasks[dataTask.taskIdentifier] = state
            return (state.body, false)
        }
        if overLimit {
            dataTask.cancel()
            return
        }
        body?.yield(data)
    }

    /// Declines every redirect: URLSession then delivers the 3xx response itself, and the chain's
    /// follow-up link decides where to go (one exchange per call, as on every transport).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task, error: error)
    }

    /// Ends a task's call: its waiter or its body, with `error` or whole.
    private func finish(_ task: URLSessionTask, error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let file = state.stagedBody { try? FileManager.default.removeItem(at: file) }
        state.recorder.update {
            $0.phaseTimings = .unavailable(reason: "URLSession on Linux does not report task metrics")
            $0.bytesReceived = Int64(state.receivedBytes)
        }
        if !state.receivedHead {
            state.waiter.resume(with: .failure(Self.failure(of: state, error: error)))
        } else if let body = state.body {
            if let failure = state.failure ?? error.map({ Self.bodyFailure($0, state: state) }) {
                body.finish(throwing: failure)
            } else {
                body.finish()
            }
        }
    }

    /// The failure for a reader that fell more than `limit` bytes behind the network: the
    /// transport closed the connection, as a server may; what a reader can go on from (a
    /// download resumes with `Range`, an event stream reconnects) it goes on from.
    static func fellBehind(unread: Int, limit: Int) -> NetworkError {
        NetworkError(
            kind: .connectionClosed, phase: .receiving,
            message: "the transport closed the connection: the body's reader fell \(unread) bytes behind the network, "
                + "more than URLSession's read-ahead of \(limit) (FoundationNetworking cannot pause a transfer); read faster, "
                + "raise URLSessionTransport.Configuration.maxUnreadBytes, or use the curl or ahc transport, which pause")
    }

    /// Why a task failed: Courier's own reason if it stopped the task, else URLSession's error,
    /// else (no error and no head) an invalid response.
    private static func failure(of state: TaskState, error: (any Error)?) -> NetworkError {
        if let failure = state.failure { return failure }
        if let error { return URLSessionConversion.networkError(from: error, receivedHead: state.receivedHead) }
        return NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: "the transfer ended without a response")
    }

    /// The error for a transfer that failed after its head: a connection closed mid-body when
    /// fewer bytes than announced arrived (FoundationNetworking reports that as "unknown").
    private static func bodyFailure(_ error: any Error, state: TaskState) -> NetworkError {
        var failure = URLSessionConversion.networkError(from: error, receivedHead: true)
        if let announced = state.announcedBytes, Int64(state.receivedBytes) < announced, failure.kind == .transportFailure {
            failure.kind = .connectionClosed
            failure.phase = .receiving
            failure.message = "the connection closed after \(state.receivedBytes) of \(announced) body bytes: \(failure.message)"
        }
        return failure
    }

    /// Stops a task, for a reason of Courier's own reported instead of URLSession's "cancelled"
    /// (`nil`: a plain cancel). Runs on the queue.
    func stop(_ task: URLSessionTask, because error: NetworkError?) {
        if let error { tasks.withLock { tasks in tasks[task.taskIdentifier]?.failure = error } }
        task.cancel()
    }
}
