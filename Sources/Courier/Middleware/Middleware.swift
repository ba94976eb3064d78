import HTTPTypes

/// Shared behaviour wrapped around every call: headers, logging, timing, retry, caching.
///
/// Use middleware for what every call of a client needs; use a ``Transport`` to change how bytes
/// move. A client has two lists (see ``NetworkClient/init(configuration:transport:middleware:networkMiddleware:observers:)``):
/// - **application middleware** run once per call and may short-circuit (a cache hit) or call
///   `next` more than once (retry, auth refresh);
/// - **network middleware** run once per attempt, closest to the transport, and must call `next`
///   exactly once (debug builds check it and fail the call with
///   ``NetworkError/Kind/middlewareMisuse``).
///
/// Requests pass application middleware in array order, then network middleware in array order,
/// then the transport; responses come back in reverse. With application `[A, B]` and network
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

    /// Whether this middleware never keeps a call waiting past `context.deadline` on its own
    /// (it waits only in `next`, or bounds its own waits by the deadline).
    ///
    /// When every middleware says so and the transport enforces the deadline itself
    /// (``Transport/enforcesDeadline``), the client skips its own deadline timer. The default is
    /// `false`.
    var staysWithinDeadline: Bool { get }
}

extension Middleware {
    /// By default middleware are not trusted to stay within the deadline.
    public var staysWithinDeadline: Bool { false }
}

/// A middleware whose whole work is a synchronous change to the request and its context before
/// `next`. The chain applies it in place of an `intercept` call, which saves an async call per
/// call; its `intercept` must do exactly the same (rewrite, then `next`).
protocol RequestRewriting: Middleware {
    /// Changes the request and context as `intercept` would before calling `next`.
    func rewrite(_ request: inout HTTPRequest, context: inout RequestContext) throws(NetworkError)
}

/// The one fold that builds the chain: application middleware outermost, then the queue's gate
/// (`QueueGate`, for calls that have a ``RequestQueue``), then network middleware, then the transport.
enum MiddlewareChain {
    /// Splits application middleware into the request rewriters at its head, which the client
    /// applies synchronously before the chain (no async layer and no context copy per call), and
    /// the rest, which the chain runs. Order is kept: the head rewriters come first either way.
    /// - Parameter application: Once-per-call middleware, in the order requests pass them.
    /// - Returns: The head rewriters and the remaining middleware.
    static func splitHead(_ application: [any Middleware]) -> (head: [any RequestRewriting], rest: [any Middleware]) {
        var head: [any RequestRewriting] = []
        for link in application {
            guard let rewriter = link as? any RequestRewriting else { break }
            head.append(rewriter)
        }
        return (head, Array(application.dropFirst(head.count)))
    }

    /// Composes middleware around a transport.
    /// - Parameters:
    ///   - application: Once-per-call middleware, in the order requests pass them.
    ///   - network: Once-per-attempt middleware, in the order requests pass them.
    ///   - transport: The end of the chain.
    /// - Returns: A function that runs a request through the whole chain.
    ///   - queued: Whether the chain passes `QueueGate` between application and network middleware
    ///     (the chain for calls that have a queue); calls without one never pay for the gate.
    static func build(
        application: [any Middleware], network: [any Middleware], around transport: any Transport, queued: Bool = false
    ) -> Middleware.Next {
        // Each layer is an async call, so the common shapes get as few layers as they can:
        // without network middleware the attempt is counted in the same closure that sends it.
        let counted: Middleware.Next
        if network.isEmpty {
            counted = { request, body, context in
                context.recorder.update { $0.attempts += 1 }
                return try await transport.send(request, body: body, context: context)
            }
        } else {
            let send: Middleware.Next = { request, body, context in
                try await transport.send(request, body: body, context: context)
            }
            let attempt = network.reversed().reduce(send) { next, link in
                { request, body, context in
                    try await runNetwork(link, request, body, context, next)
                }
            }
            counted = { request, body, context in
                context.recorder.update { $0.attempts += 1 }
                return try await attempt(request, body, context)
            }
        }
        var inner = counted
        var outer = application[...]
        if queued {
            inner = { request, body, context in try await QueueGate.pass(request, body, context, counted) }
        } else if network.isEmpty, let retry = application.last as? RetryMiddleware {
            // The default chain's innermost shape: retry right before the transport. One closure
            // holds both, so an attempt costs no async frame of its own.
            inner = { request, body, context in
                try await retry.run(request, body: body, context: context) { request, body, context in
                    context.recorder.update { $0.attempts += 1 }
                    return try await transport.send(request, body: body, context: context)
                }
            }
            outer = outer.dropLast()
        }
        return outer.reversed().reduce(inner) { next, link in
            // A middleware that only rewrites the request runs inside this layer, synchronously.
            if let rewriter = link as? any RequestRewriting {
                return { request, body, context in
                    var request = request
                    var context = context
                    try rewriter.rewrite(&request, context: &context)
                    return try await next(request, body, context)
                }
            }
            // Retry is in most default chains: called concretely, its frame can be inlined.
            if let retry = link as? RetryMiddleware {
                return { request, body, context in
                    try await retry.run(request, body: body, context: context, next: next)
                }
            }
            return { request, body, context in
                try await link.intercept(request, body: body, context: context, next: next)
            }
        }
    }

    /// Runs one network middleware; debug builds check that it called `next` exactly once.
    private static func runNetwork(
        _ link: any Middleware, _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        #if DEBUG
            let calls = Locked(0)
            let counted: Middleware.Next = { request, body, context in
                let count = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard count == 1 else { throw misuse(link, "called next more than once") }
                return try await next(request, body, context)
            }
            let response = try await link.intercept(request, body: body, context: context, next: counted)
            guard calls.withLock({ $0 }) == 1 else { throw misuse(link, "returned without calling next") }
            return response
        #else
            return try await link.intercept(request, body: body, context: context, next: next)
        #endif
    }

    private static func misuse(_ link: any Middleware, _ what: String) -> NetworkError {
        NetworkError(
            kind: .middlewareMisuse, phase: .sending,
            message: "network middleware \(type(of: link)) \(what); network middleware must call next exactly once")
    }
}
