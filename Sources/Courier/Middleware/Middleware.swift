import HTTPTypes

/// Shared behaviour wrapped around every call: headers, logging, timing, retry, caching.
///
/// Use middleware for what every call of a client needs; use a ``Transport`` to change how bytes
/// move. A client has two lists (see ``NetworkClient/init(configuration:transport:middleware:networkMiddleware:observers:queue:)``):
/// - **application middleware** run once per call and may short-circuit (a cache hit) or call
///   `next` more than once (retry, auth refresh);
/// - **network middleware** run once per attempt, closest to the transport, and must call `next`
///   exactly once (debug builds check it and fail the call with
///   ``NetworkError/Kind/middlewareMisuse``).
///
/// Requests pass application middleware in array order, then Courier's own links (retry, redirect
/// follow-up, the queue's gate), then network middleware in array order, then the transport;
/// responses come back in reverse (``NetworkClient/linkOrder`` lists the whole chain). With application `[A, B]` and network
/// `[N]`, A sees the request first and the response last, and N runs once per attempt that B lets
/// through.
///
/// ```swift
/// struct AddRequestID: Middleware {
///     func intercept(
///         _ request: HTTPRequest, body: RequestBody?, context: RequestContext,
///         next: Middleware.Next
///     ) async throws -> TransportResponse {
///         var request = request
///         request.headerFields[HTTPField.Name("X-Request-ID")!] = context.requestID
///         return try await next(request, body, context)
///     }
/// }
/// ```
///
/// Implementing middleware:
/// - Call `next` to continue, or return a response without calling it to short-circuit (a cache
///   hit, a rejected call). Calling it more than once repeats the rest of the chain (retry).
/// - Throw ``NetworkError`` for failures you create; let errors from `next` pass unless you
///   handle them.
/// - Be `Sendable` and keep no per-call state in stored properties: one instance serves every call.
/// - A wait of your own (anything but `next`) must end when the task is cancelled or the call's
///   deadline passes: wait under ``RequestContext/withCancellationHandler(_:onCancel:)`` or
///   ``RequestContext/interruptible(_:)``, or sleep on ``RequestContext/clock`` no later than
///   ``RequestContext/deadline``.
public protocol Middleware: Sendable {
    /// The rest of the chain: later middleware, then the transport. It runs where its caller runs
    /// (`nonisolated(nonsending)`): passing a call down the chain switches no executor.
    typealias Next =
        nonisolated(nonsending) @Sendable (HTTPRequest, RequestBody?, RequestContext) async throws
        -> TransportResponse

    /// Handles one request.
    ///
    /// - Parameters:
    ///   - request: The request head.
    ///   - body: The request body, if any.
    ///   - context: The call's context.
    ///   - next: The rest of the chain. It is `@escaping` so that a link may hand it to other work
    ///   (the queue's gate shares one transfer between identical calls); an implementation may
    ///   declare it non-escaping.
    /// - Returns: The response.
    /// - Throws: A ``NetworkError``, or whatever `next` threw.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: RequestContext,
        next: @escaping Next
    ) async throws -> TransportResponse

}
