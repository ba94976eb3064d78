import Courier
import Foundation

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

    /// The caller waiting for the response head; `nil` until attached and after it was resumed.
    var headWaiter: CheckedContinuation<TransportResponse, any Error>?
    /// An outcome that arrived before the caller attached (a task cancelled before it resumed).
    var earlyOutcome: Result<TransportResponse, any Error>?
    /// Where body chunks go once the head was delivered.
    var body: AsyncThrowingStream<Data, any Error>.Continuation?
    var receivedHead = false
    var receivedBytes = 0
    /// The body length the head announced, if any: an error before that many bytes arrived is a
    /// connection that closed mid-body, whatever code FoundationNetworking gives it.
    var announcedBytes: Int64?
    /// Set when Courier itself stopped the task (too large, malformed head): reported instead
    /// of URLSession's "cancelled".
    var failure: NetworkError?

    init(recorder: TransferRecorder, maxResponseBytes: Int, stagedBody: URL?) {
        self.recorder = recorder
        self.maxResponseBytes = maxResponseBytes
        self.stagedBody = stagedBody
    }
}

/// The session's delegate: routes URLSession's callbacks to the task they belong to.
///
/// Callbacks arrive on the session's serial delegate queue; `register`/`attach` come from the
/// calling tasks. All state is behind one lock, and no continuation is resumed under it.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: NSObject subclasses cannot be checked; the only state is `tasks`, behind a lock.
    private let tasks = Locked<[Int: TaskState]>([:])

    func register(_ task: URLSessionTask, _ state: TaskState) {
        var state = state
        state.task = task
        tasks.withLock { [state] in $0[task.taskIdentifier] = state }
    }

    /// Hands the caller's continuation to the task's state; `false` when the task already ended
    /// (the continuation was resumed with that outcome, and the task must not be resumed).
    @discardableResult
    func attach(_ waiter: CheckedContinuation<TransportResponse, any Error>, to identifier: Int) -> Bool {
        let early: Result<TransportResponse, any Error>? = tasks.withLock { tasks in
            guard var state = tasks[identifier] else {
                return .failure(
                    NetworkError(kind: .transportFailure, phase: .sending, message: "URLSession task \(identifier) was not registered"))
            }
            if let outcome = state.earlyOutcome {
                tasks[identifier] = nil
                return outcome
            }
            state.headWaiter = waiter
            tasks[identifier] = state
            return nil
        }
        if let early {
            waiter.resume(with: early)
            return false
        }
        return true
    }

    /// Fails every call in flight and cancels its task (the transport is shutting down).
    func closeAll() {
        let ended: [TaskState] = tasks.withLock { tasks in
            let all = Array(tasks.values)
            for (identifier, var state) in tasks {
                if state.headWaiter == nil, state.body == nil {
                    // Not attached yet: `attach` finds the outcome.
                    if state.earlyOutcome == nil { state.earlyOutcome = .failure(Self.shutDown(state)) }
                    tasks[identifier] = state
                } else {
                    tasks[identifier] = nil
                }
            }
            return all
        }
        for state in ended {
            state.task?.cancel()
            if let file = state.stagedBody { try? FileManager.default.removeItem(at: file) }
            state.headWaiter?.resume(throwing: Self.shutDown(state))
            state.body?.finish(throwing: Self.shutDown(state))
        }
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
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
        continuation.onTermination = { [weak dataTask] termination in
            // The consumer stopped reading (cancelled or dropped the body): stop the transfer.
            if case .cancelled = termination { dataTask?.cancel() }
        }
        let response = TransportResponse(head: head, body: ResponseBody(stream: stream, expectedLength: announced))
        let (waiter, tooLarge): (CheckedContinuation<TransportResponse, any Error>?, NetworkError?) = tasks.withLock { tasks in
            guard var state = tasks[dataTask.taskIdentifier] else { return (nil, nil) }
            if let announced, announced > state.maxResponseBytes {
                let error = NetworkError.responseTooLarge(limit: state.maxResponseBytes, announced: announced)
                state.failure = error
                tasks[dataTask.taskIdentifier] = state
                return (nil, error)
            }
            state.receivedHead = true
            state.announcedBytes = announced
            state.body = continuation
            state.recorder.enter(.receiving)
            let waiter = state.headWaiter
            state.headWaiter = nil
            tasks[dataTask.taskIdentifier] = state
            return (waiter, nil)
        }
        if tooLarge != nil {
            continuation.finish()
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        waiter?.resume(returning: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (body, overLimit): (AsyncThrowingStream<Data, any Error>.Continuation?, Bool) = tasks.withLock { tasks in
            guard var state = tasks[dataTask.taskIdentifier] else { return (nil, false) }
            state.receivedBytes += data.count
            if state.receivedBytes > state.maxResponseBytes {
                state.failure = NetworkError.responseTooLarge(limit: state.maxResponseBytes, announced: nil)
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
        let finished: TaskState? = tasks.withLock { tasks in
            guard var state = tasks.removeValue(forKey: task.taskIdentifier) else { return nil }
            if state.headWaiter == nil, state.body == nil {
                // Ended before the caller attached (cancelled before it resumed): keep the first
                // outcome for `attach`.
                if state.earlyOutcome == nil { state.earlyOutcome = .failure(Self.failure(of: state, error: error)) }
                tasks[task.taskIdentifier] = state
            }
            return state
        }
        guard let state = finished else { return }
        if let file = state.stagedBody { try? FileManager.default.removeItem(at: file) }
        state.recorder.update {
            $0.phaseTimings = .unavailable(reason: "URLSession on Linux does not report task metrics")
            $0.bytesReceived = Int64(state.receivedBytes)
        }
        if let waiter = state.headWaiter {
            waiter.resume(throwing: Self.failure(of: state, error: error))
        } else if let body = state.body {
            if let failure = state.failure ?? error.map({ Self.bodyFailure($0, state: state) }) {
                body.finish(throwing: failure)
            } else {
                body.finish()
            }
        }
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

    /// Stops a task for a reason of Courier's own, reported instead of URLSession's "cancelled".
    func stop(_ task: URLSessionTask, because error: NetworkError) {
        tasks.withLock { tasks in tasks[task.taskIdentifier]?.failure = error }
        task.cancel()
    }
}
