import HTTPTypes

/// Whether a request may be sent again: the one rule that every link, wing and transport that
/// sends a request a second time asks.
///
/// Retry (``RetryMiddleware``), hedging, the resend of an attempt the server never received, the
/// auth-refresh repeat after a `401`, download resumption, event-stream reconnection and a
/// transport's own resend of a request whose connection died all decide "again" here, and nowhere
/// else. What they add on top is their own trigger (a status, a transient error, a `401`), the
/// host's retry budget (``RequestContext/drawRetryBudget(host:)``) and the call's deadline; a
/// download and an event stream add theirs through one plan (`RepeatPlan`: the budget, the wait on
/// the client's clock, the reading's end).
///
/// Use it in a middleware or a transport that sends a request more than once:
///
/// ```swift
/// guard RepeatRule.mayRepeat(request, body: body) else { return try await next(request, body, context) }
/// ```
public enum RepeatRule {
    /// Why the request would go again, which decides what it takes.
    public enum Reason: Sendable, Hashable {
        /// The server may have acted on the request (an error or a status came after it was sent,
        /// or a second copy races the first): only an idempotent request may go again.
        case afterFailure
        /// The server did not act on it: it was never sent (``NetworkError/neverReachedServer``),
        /// or the server refused it before acting (`401` before an auth refresh). Any method may
        /// go again; the body must still be readable a second time.
        case unprocessed
        /// A second copy goes while the first may still be running (hedging): only an idempotent
        /// method. An `Idempotency-Key` does not make it safe: a server that honours the key
        /// answers a copy that overlaps the first with `409 Conflict`, and that quick answer
        /// would win the race.
        case concurrentCopy
    }

    /// The methods that may go again without an idempotency key (RFC 9110, section 9.2.2).
    public static let idempotentMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace]

    /// The header that makes a request of any method repeatable: the server recognises the
    /// second copy by it.
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Whether the request is idempotent: an idempotent method, or any method with an
    /// ``idempotencyKey``.
    /// - Parameter request: The request.
    /// - Returns: `true` when a second copy cannot do more than the first.
    public static func isIdempotent(_ request: HTTPRequest) -> Bool {
        // The members of `idempotentMethods`, compared without hashing the method's text.
        switch request.method {
        case .get, .head, .options, .put, .delete, .trace: return true
        default: return request.headerFields[idempotencyKey] != nil
        }
    }

    /// Whether the request may be sent again.
    /// - Parameters:
    ///   - request: The request as it would go again.
    ///   - body: Its body: a body that cannot be read twice (a one-shot stream) never goes again.
    ///   - reason: Why it would go again; ``Reason/afterFailure`` by default.
    /// - Returns: `true` when the body can be replayed and, after a failure, the request is
    ///   idempotent (for a concurrent copy, its method is).
    public static func mayRepeat(_ request: HTTPRequest, body: RequestBody?, reason: Reason = .afterFailure) -> Bool {
        if let body, !body.isReplayable { return false }
        switch reason {
        case .unprocessed: return true
        case .afterFailure: return isIdempotent(request)
        case .concurrentCopy: return idempotentMethods.contains(request.method)
        }
    }
}
