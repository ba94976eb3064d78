import HTTPTypes
import Logging

/// Supplies the credential ``AuthRefreshMiddleware`` sends, and a new one when the server
/// refuses it.
public protocol CredentialProvider: Sendable {
    /// The credential to send now, as the whole header value (for example `Bearer abc`).
    /// - Throws: Any error; the call fails with ``NetworkError/Kind/authenticationFailed``.
    func credential() async throws -> String

    /// A new credential, after the server answered 401 to `rejected`.
    /// - Parameter rejected: The credential the server refused.
    /// - Returns: The new credential.
    /// - Throws: Any error; every call waiting on this refresh fails with
    ///   ``NetworkError/Kind/authenticationFailed``.
    func refresh(rejected: String) async throws -> String
}

/// Sends a credential with every call and, on 401, refreshes it once for everyone.
///
/// - **Single flight.** When many calls get 401 at once, one refresh runs; the others wait for
///   it. A call whose rejected credential is already outdated just retries with the newer one.
/// - **Once per call.** Each call is repeated at most once with the new credential; a second 401
///   is returned as it is (the status check then fails the call with `http_status`).
/// - **One clear error.** When the refresh fails, every call waiting on it fails with
///   ``NetworkError/Kind/authenticationFailed``, carrying the refresh's error.
/// - **No loops.** At most ``maxRefreshes`` refreshes per ``refreshWindow`` (3 per minute by
///   default); past that, calls that get 401 fail with `authentication_failed` at once.
/// - **Within the retry budget.** Each repeat draws from the host's retry budget
///   (``Resilience/retryBudget``), which retries and hedges share: once it is spent, the 401 is
///   returned as it is and ``RequestMetrics/retryRefusedByBudget`` is set.
///
/// - **A body that can go again.** The repeat follows ``RepeatRule`` (a `401` means the server did
///   not act on the request, so any method may go again): a request whose body cannot be read a
///   second time (a one-shot stream) renews the credential for later calls and gets its 401 back.
/// - **Same origin only.** A redirect hop to another origin gets no credential, and a 401 that
///   came from another origin (after a redirect) is returned as it is, with no refresh.
///
/// An API object that sets the credential header itself is left alone. The refresh runs in its
/// own task: a caller cancelled while waiting does not cancel it for the others. A call waits for
/// it only within its own budget: the caller's cancellation ends the wait as `cancelled`, and the
/// call's deadline as `timed_out`, while the refresh goes on for the other calls.
public final class AuthRefreshMiddleware: Middleware {
    private struct State {
        var current: String?
        var refreshing: Task<String, any Error>?
        var refreshedAt: [ContinuousClock.Instant] = []
    }

    /// The header that carries the credential: `Authorization` by default.
    public let header: HTTPField.Name
    /// The most refreshes per ``refreshWindow``.
    public let maxRefreshes: Int
    /// The window the refresh limit counts in.
    public let refreshWindow: Duration
    private let provider: any CredentialProvider
    private let timeSource: any TimeSource
    private let state = Locked(State())

    /// Creates the middleware.
    /// - Parameters:
    ///   - provider: Where credentials come from.
    ///   - header: The header to set; `Authorization` by default.
    ///   - maxRefreshes: The most refreshes per window (at least 1); 3 by default.
    ///   - refreshWindow: The window; one minute by default.
    ///   - timeSource: The clock for the window.
    public init(
        provider: any CredentialProvider, header: HTTPField.Name = .authorization, maxRefreshes: Int = 3,
        refreshWindow: Duration = .seconds(60), timeSource: any TimeSource = SystemTimeSource()
    ) {
        self.provider = provider
        self.header = header
        self.maxRefreshes = max(1, maxRefreshes)
        self.refreshWindow = refreshWindow
        self.timeSource = timeSource
    }

    /// Sets the credential, and on 401 refreshes it (shared) and repeats the call once.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        // A hop that left the call's origin gets no credential (as network middleware, this runs
        // again on each redirect hop).
        if context.ownHeaderNames.contains(header) || context.hasCrossedOrigin { return try await next(request, body, context) }
        // The header is a credential whatever its name: redacted, and part of the cache's and the
        // de-duplication's keys.
        var context = context
        if !context.isCredential(header.canonicalName) { context.secretHeaderNames.insert(header.canonicalName) }
        let sent = try await currentCredential(context)
        var request = request
        request.headerFields[header] = sent
        let response = try await next(request, body, context)
        // Only a 401 from the origin the credential went to says the credential was refused.
        // The server refused the request before acting on it: any method may go again, when its
        // body can be read a second time.
        guard response.head.status == .unauthorized, !response.hasCrossedOrigin else { return response }
        let renewed = try await renewed(after: sent, context)
        // The credential is renewed for every later call; this one goes again only when its body can.
        guard RepeatRule.mayRepeat(request, body: body, reason: .unprocessed) else { return response }
        guard context.drawRetryBudget(host: request.authority ?? "") else { return response }
        context.logger.debug("courier.auth.retrying", metadata: ["courier.status": "401"])
        request.headerFields[header] = renewed
        return try await next(request, body, context)
    }

    private func currentCredential(_ context: RequestContext) async throws(NetworkError) -> String {
        let (known, pending) = state.withLock { ($0.current, $0.refreshing) }
        if let known { return known }
        do {
            let value: String
            if let pending {
                value = try await Self.value(of: pending, within: context)
            } else {
                value = try await provider.credential()
            }
            state.withLock { state in
                if state.current == nil { state.current = value }
            }
            return value
        } catch let ended as WaitEnded {
            throw ended.error
        } catch {
            throw Self.failure("the credential provider failed: \(error)", underlying: error)
        }
    }

    /// A credential newer than `rejected`: the one already refreshed, the refresh in flight, or a
    /// new refresh if the limit allows.
    private func renewed(after rejected: String, _ context: RequestContext) async throws(NetworkError) -> String {
        let now = timeSource.now
        enum Decision {
            case use(String)
            case wait(Task<String, any Error>)
            case refuse(NetworkError)
        }
        let decision: Decision = state.withLock { state in
            if let current = state.current, current != rejected { return .use(current) }
            if let refreshing = state.refreshing { return .wait(refreshing) }
            state.refreshedAt.removeAll { $0.duration(to: now) >= refreshWindow }
            guard state.refreshedAt.count < maxRefreshes else {
                return .refuse(
                    Self.failure("the credential was refused and the refresh limit (\(maxRefreshes) per \(refreshWindow)) is reached"))
            }
            state.refreshedAt.append(now)
            let provider = provider
            let task = Task { try await provider.refresh(rejected: rejected) }
            state.refreshing = task
            return .wait(task)
        }
        let task: Task<String, any Error>
        switch decision {
        case .use(let current): return current
        case .refuse(let error): throw error
        case .wait(let pending): task = pending
        }
        do {
            let value = try await Self.value(of: task, within: context)
            state.withLock { state in
                state.current = value
                state.refreshing = nil
            }
            return value
        } catch let ended as WaitEnded {
            // This call stopped waiting; the refresh goes on for the others.
            throw ended.error
        } catch {
            state.withLock { state in
                if state.current == rejected { state.current = nil }
                state.refreshing = nil
            }
            throw Self.failure("refreshing the credential failed: \(error)", underlying: error)
        }
    }

    /// The outcome of a shared refresh, waited for by one call: its cancellation or deadline ends
    /// the wait with ``WaitEnded`` (the client reports a passed deadline as `timed_out`), and the
    /// refresh itself is not cancelled.
    private static func value(of task: Task<String, any Error>, within context: RequestContext) async throws -> String {
        let waiter = RefreshWaiter()
        return try await context.withCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                guard waiter.park(continuation) else { return }
                Task { waiter.finish(await task.result) }
            }
        } onCancel: {
            waiter.finish(.failure(WaitEnded()))
        }
    }

    private static func failure(_ message: String, underlying: (any Error)? = nil) -> NetworkError {
        var error = NetworkError(kind: .authenticationFailed, phase: .sending, message: message, status: 401)
        error.underlying = underlying
        return error
    }
}

/// A call stopped waiting for a shared refresh (cancelled, or its deadline passed).
private struct WaitEnded: Error {
    /// What the call reports; the client turns it into `timed_out` when the deadline passed.
    var error: NetworkError { NetworkError.cancelled(phase: .sending) }
}

/// One call's wait for a shared refresh: resumed exactly once, by the refresh's outcome or by
/// the call's cancellation or deadline, whichever comes first.
private final class RefreshWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String, any Error>?
        var finished = false
    }

    private let state = Locked(State())

    /// Keeps the continuation; `false` (after resuming it) when the wait already ended.
    func park(_ continuation: CheckedContinuation<String, any Error>) -> Bool {
        let ended = state.withLock { state -> Bool in
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        if ended { continuation.resume(throwing: WaitEnded()) }
        return !ended
    }

    /// Ends the wait with `result`, the first time only.
    func finish(_ result: Result<String, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<String, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}
