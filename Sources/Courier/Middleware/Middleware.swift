import HTTPTypes

/// Shared behaviour wrapped around every call: headers, logging, timing, retry, caching.
///
/// Use middleware for what every call of a client needs; use a ``Transport`` to change how bytes
/// move. Middleware run in array order on the way out and in reverse order on the way back:
/// with `[A, B]`, A sees the request first and the response last.
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
public protocol Middleware: Sendable {
    /// The rest of the chain: later middleware, then the transport.
    typealias Next = @Sendable (HTTPRequest, RequestBody?, RequestContext) async throws -> TransportResponse

    /// Handles one request.
    ///
    /// - Parameters:
    ///   - request: The request head.
    ///   - body: The request body, if any.
    ///   - context: The call's context.
    ///   - next: The rest of the chain.
    /// - Returns: The response.
    /// - Throws: A ``NetworkError``, or whatever `next` threw.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: RequestContext,
        next: Next
    ) async throws -> TransportResponse
}

/// The one fold that builds the chain: the first middleware is outermost, the transport innermost.
enum MiddlewareChain {
    /// Composes middleware around a transport.
    /// - Parameters:
    ///   - middleware: In the order requests pass them.
    ///   - transport: The end of the chain.
    /// - Returns: A function that runs a request through the whole chain.
    static func build(_ middleware: [any Middleware], around transport: any Transport) -> Middleware.Next {
        let end: Middleware.Next = { request, body, context in
            context.recorder.update { $0.attempts += 1 }
            return try await transport.send(request, body: body, context: context)
        }
        return middleware.reversed().reduce(end) { next, link in
            { request, body, context in
                try await link.intercept(request, body: body, context: context, next: next)
            }
        }
    }
}
