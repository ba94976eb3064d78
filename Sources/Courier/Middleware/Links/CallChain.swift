import HTTPTypes

/// The one list of links every call of a client passes, and the one fold that turns it into a
/// function. Built once per client.
///
/// The order (requests pass it top to bottom, responses come back bottom to top):
/// 1. team headers (`TeamHeadersMiddleware`, when the configuration has header rules);
/// 2. the application middleware, once per call;
/// 3. retry (`RetryMiddleware`, when the configuration has a retry policy), then the circuit
///    breaker (`CircuitBreakerLink`, when the configuration has one);
/// 4. follow-up (`FollowUpLink`): redirects;
/// 5. the response cache (`CacheLink`): always present; without a ``ResponseCache`` in the
///    call's context it only passes the call on (or fails a ``CachePolicy/cacheOnly`` call);
/// 6. the bridge (`BridgeLink`): `Accept-Encoding`, and decoding of the response body (see
///    ``Decompression``);
/// 7. the queue's gate (`QueueGate`): calls that have a ``RequestQueue`` wait for a slot here;
/// 8. the network middleware, once per attempt (`NetworkLink` checks that each calls `next` once);
/// 9. the transport, after counting the attempt; every head it returns passes
///    `ResponseHeadChecks` (the call's ``ResponseHeadLimits`` and `Content-Length`) here, so a
///    malformed head fails the same way on every transport.
///
/// Every link is an ordinary ``Middleware``: none is recognised by its type, nothing runs before
/// the fold, and `MiddlewareChainTests` pins the whole order. A link may also be a
/// ``BindableLink``, which saves the closure layer around `intercept` (one async frame per link
/// per call); its behaviour is the same either way. When a client has no network middleware,
/// the built-in links 4 to 9 run as one function (`BuiltInTail`), calling the same functions
/// the links' own closures call: the order and the behaviour are the same, the async frames
/// fewer (the mock's CPU per call fell by about 6%).

struct CallChain: Sendable {
    /// The links in the order requests pass them, without the transport.
    let links: [any Middleware]
    /// How many of ``links`` are once-per-call middleware (team headers, the application's, retry),
    /// with the circuit breaker below retry: the links above follow-up.
    let applicationCount: Int
    /// The whole chain: the links, then the transport.
    let run: Middleware.Next
    /// The calls and retries of each host: one budget for retry, hedging and the resend of
    /// attempts that never reached the server.
    let ledger: RetryBudgetLedger

    /// Builds the chain.
    /// - Parameters:
    ///   - configuration: The header rules, retry policy, resilience and decompression settings:
    ///     a link for each that is set.
    ///   - application: Once-per-call middleware, in the order requests pass them.
    ///   - breaker: The circuits per host; no link when `nil`.
    ///   - network: Once-per-attempt middleware, in the order requests pass them.
    ///   - transport: The end of the chain.
    init(
        configuration: ClientConfiguration, application: [any Middleware], breaker: CircuitBreaker?, network: [any Middleware],
        transport: any Transport
    ) {
        let headerRules = configuration.headerRules
        let retry = configuration.retry
        let hedging = configuration.resilience.hedging
        let deadlineHeader = configuration.resilience.deadlineHeaderName
        var links: [any Middleware] = []
        if !headerRules.isEmpty { links.append(TeamHeadersMiddleware(rules: headerRules)) }
        links += application
        // Retry and hedging draw from one budget per host.
        let ledger = RetryBudgetLedger(budget: configuration.resilience.retryBudget)
        self.ledger = ledger
        if let retry { links.append(RetryMiddleware(policy: retry, ledger: ledger)) }
        if let breaker { links.append(CircuitBreakerLink(breaker: breaker)) }
        if let hedging { links.append(HedgingLink(policy: hedging, ledger: ledger, depositsCalls: retry == nil)) }
        applicationCount = links.count
        let bridge = BridgeLink(decompression: configuration.decompression, transportDecodes: transport.decodesContentCodings)
        links.append(FollowUpLink())
        // Network middleware run below the cache and the queue, so what they add (a credential,
        // say) is never in the cache's or the de-duplication's key: with any, the cache stores
        // only `public` answers and calls are de-duplicated only by a key the caller gives.
        let unseenBelow = !network.isEmpty
        links.append(CacheLink(networkMiddlewareBelow: unseenBelow))
        links.append(bridge)
        links.append(QueueGate(networkMiddlewareBelow: unseenBelow))
        links += network.map(NetworkLink.init)
        self.links = links
        var next: Middleware.Next
        var outer = links[..<applicationCount]
        if network.isEmpty {
            // The built-in links just appended, with nothing between them and the transport, run
            // as one function: the same work in the same order, one async frame instead of four.
            let tail = BuiltInTail(bridge: bridge, transport: transport, deadlineHeader: deadlineHeader)
            next = { request, body, context in try await tail.run(request, body, context) }
        } else {
            next = { request, body, context in
                try await Self.attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader)
            }
            outer = links[...]
        }
        for link in outer.reversed() {
            next = Self.bind(link, to: next)
        }
        self.run = next
    }

    /// One attempt on the transport, the end of the chain: counted, sent (with the time left in
    /// `deadlineHeader`, when there is one), and its head checked (`ResponseHeadChecks`), so a
    /// malformed head fails the same way on every transport. An attempt that never reached the
    /// server is sent once more (``resendUnsent(_:_:_:_:on:deadlineHeader:)``).
    static func attempt(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, on transport: any Transport,
        deadlineHeader: HTTPField.Name?, resendsUnsent: Bool = true
    ) async throws -> TransportResponse {
        // What reaches a transport passes the one target rule and carries no framing header,
        // whichever middleware wrote it last.
        if let problem = RequestTarget.problem(in: request) { throw problem }
        if let framing = request.headerFields.first(where: { HeaderValidation.isFraming($0.name) }) {
            throw HeaderValidation.framingRefused(framing.name)
        }
        context.recorder.update { $0.attempts += 1 }
        let sent = deadlineHeader.map { stamped(request, $0, context) } ?? request
        let response: TransportResponse
        do {
            response = try await transport.send(sent, body: body, context: context)
        } catch let error as NetworkError where resendsUnsent && error.neverReachedServer {
            return try await resendUnsent(error, request, body, context, on: transport, deadlineHeader: deadlineHeader)
        }
        // Throwing drops the body, which stops the transfer.
        if let problem = ResponseHeadChecks.problem(in: response.head, limits: context.responseHeadLimits) { throw problem }
        return response
    }

    /// An attempt the server never saw (``NetworkError/neverReachedServer``), once more, whatever
    /// the method: within the deadline and the host's retry budget, when the body can be sent again
    /// and the client resends such attempts (``Resilience/retriesUnsentRequests``); else `error`.
    @inline(never)
    private static func resendUnsent(
        _ error: NetworkError, _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, on transport: any Transport,
        deadlineHeader: HTTPField.Name?
    ) async throws -> TransportResponse {
        guard context.internals.resendsUnsent, body?.isReplayable ?? true, context.remaining > .zero, !context.isCancelled,
            context.drawRetryBudget(host: request.authority ?? "")
        else { throw error }
        context.recorder.update { $0.unsentRetries += 1 }
        return try await attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader, resendsUnsent: false)
    }

    /// `request` with the time left before the deadline in `header`, in whole milliseconds, unless
    /// it has the header already.
    private static func stamped(_ request: HTTPRequest, _ header: HTTPField.Name, _ context: RequestContext) -> HTTPRequest {
        guard request.headerFields[header] == nil else { return request }
        var stamped = request
        stamped.headerFields[header] = String(context.remaining.wholeMilliseconds)
        return stamped
    }

    /// One layer of the fold: the link with the rest of the chain after it.
    private static func bind(_ link: any Middleware, to next: @escaping Middleware.Next) -> Middleware.Next {
        if let bindable = link as? any BindableLink { return bindable.bound(to: next) }
        return { request, body, context in try await link.intercept(request, body: body, context: context, next: next) }
    }

    /// The links' names in order (a network middleware by its own name), then the transport's.
    static func names(of links: [any Middleware], transport: any Transport) -> [String] {
        links.map { link in
            let shown = (link as? NetworkLink)?.wrapped ?? link
            return String(describing: type(of: shown))
        } + ["transport \(transport.name)"]
    }
}

/// A link that can hand the fold the function it runs, with `next` already bound, instead of
/// being wrapped in a closure that calls ``Middleware/intercept(_:body:context:next:)``.
///
/// Each layer of the chain is an async call; a link that binds itself costs one per call instead
/// of two. The bound function must do exactly what `intercept` does: the built-in links implement
/// `intercept` by calling it.
protocol BindableLink: Middleware {
    /// The link's work with the rest of the chain after it.
    func bound(to next: @escaping Middleware.Next) -> Middleware.Next
}

extension BindableLink {
    /// Runs the bound function (the same work the fold runs).
    func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        try await bound(to: next)(request, body, context)
    }
}

/// Follow-up, the cache, the bridge, the queue's gate and the transport as one function, for a client with
/// no network middleware. Each step is the function its link's closure calls
/// (`FollowUpLink.redirects` and `follow`, `BridgeLink.decodedIfEncoded`, `QueueGate.pass`,
/// `CallChain.attempt`), in the chain's order.
struct BuiltInTail: Sendable {
    let bridge: BridgeLink
    let transport: any Transport
    let deadlineHeader: HTTPField.Name?

    /// Follow-up: one hop (through the cache when the call has one), then the redirects it leads to.
    func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        // Without a cache the cache link would only pass the call on: the hop is called directly,
        // so a call without a cache pays no async frame for it.
        let usesCache = context.cache != nil || context.cachePolicy == .cacheOnly
        let response =
            usesCache ? try await CacheLink.run(request, body, context, next: hop) : try await hop(request, body, context)
        guard FollowUpLink.redirects(response) else { return response }
        return try await FollowUpLink().follow(response, of: request, body: body, context: context, next: usesCache ? cachedHop : hop)
    }

    /// The cache around one hop, for the redirects of a call with a cache.
    @Sendable func cachedHop(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        try await CacheLink.run(request, body, context, next: hop)
    }

    /// The bridge around the gate around one attempt.
    @Sendable func hop(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        let response: TransportResponse
        if let placement = context.placement {
            response = try await QueueGate().pass(request, body, context, placement, attempt)
        } else {
            response = try await CallChain.attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader)
        }
        guard bridge.decodes(response.head, of: request) else { return response }
        return try bridge.decodedIfEncoded(response, to: request, context: context)
    }

    @Sendable func attempt(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        try await CallChain.attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader)
    }
}
