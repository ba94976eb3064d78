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
///    then the cookie jar (`CookieJar`, when the configuration keeps cookies) around each hop:
///    the jar's cookies for the hop's URL, and what its answer sets;
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
/// The outer links and the network middleware are ordinary ``Middleware``; the built-in middle
/// (follow-up, cookies, cache, bridge, queue gate) is one function, `ChainMiddle` (each closure
/// layer cost the mock two executor checks a call). None is recognised by its type, nothing runs
/// before the fold, every call takes the same path through it, ``NetworkClient/chainOrder``
/// names every step, and `MiddlewareChainTests` pins the whole order.

struct CallChain: Sendable {
    /// The once-per-call links in the order requests pass them: team headers, the application's
    /// middleware, retry, the circuit breaker, hedging.
    let outer: [any Middleware]
    /// The network middleware, in the order requests pass them.
    let network: [any Middleware]
    /// The whole chain: the links, then the transport.
    let run: Middleware.Next
    /// The calls and retries of each host: one budget for retry, hedging and the resend of
    /// attempts that never reached the server.
    let ledger: RetryBudgetLedger
    /// The built-in middle, for its steps' names.
    private let middle: ChainMiddle

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
        transport: any Transport, cookies: CookieJar? = nil
    ) {
        let retry = configuration.retry
        var outer: [any Middleware] = []
        if !configuration.headerRules.isEmpty { outer.append(TeamHeadersMiddleware(rules: configuration.headerRules)) }
        outer += application
        // Retry and hedging draw from one budget per host.
        let ledger = RetryBudgetLedger(budget: configuration.resilience.retryBudget)
        self.ledger = ledger
        if let retry { outer.append(RetryMiddleware(policy: retry, ledger: ledger)) }
        if let breaker { outer.append(CircuitBreakerLink(breaker: breaker)) }
        if let hedging = configuration.resilience.hedging {
            outer.append(HedgingLink(policy: hedging, ledger: ledger, depositsCalls: retry == nil))
        }
        self.outer = outer
        self.network = network
        let attempt = Attempt(
            transport: transport, deadlineHeader: configuration.resilience.deadlineHeaderName, proxy: configuration.proxy)
        var below: Middleware.Next?
        if !network.isEmpty {
            var next: Middleware.Next = { request, body, context in try await attempt.run(request, body, context) }
            for link in network.reversed() {
                next = Self.bind(NetworkLink(wrapped: link), to: next)
            }
            below = next
        }
        let middle = ChainMiddle(
            bridge: BridgeLink(decompression: configuration.decompression, transportDecodes: transport.decodesContentCodings),
            networkMiddlewareBelow: below != nil, below: below, attempt: attempt, cookies: cookies)
        self.middle = middle
        var next: Middleware.Next = { request, body, context in try await middle.run(request, body, context) }
        for link in outer.reversed() {
            next = Self.bind(link, to: next)
        }
        self.run = next
    }

    /// The chain's names in order: the outer links, the built-in middle's steps
    /// (``ChainMiddle/names``), the network middleware by their own names, then the transport.
    func names(transport: any Transport) -> [String] {
        outer.map { String(describing: type(of: $0)) } + middle.names + network.map { String(describing: type(of: $0)) }
            + ["transport \(transport.name)"]
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
        // One pass over the fields: framing refused, cookies counted.
        var cookieFields = 0
        for field in request.headerFields {
            if HeaderValidation.isFraming(field.name) { throw HeaderValidation.framingRefused(field.name) }
            if field.name == .cookie { cookieFields += 1 }
        }
        context.recorder.update { $0.attempts += 1 }
        var sent = deadlineHeader.map { stamped(request, $0, context) } ?? request
        if cookieFields > 1 { joinCookies(&sent) }
        let progress = context.internals.progress
        // Each attempt that sends a body sends it from the first byte (a redirect that drops the
        // body keeps the count of the hop that sent it).
        if body != nil { progress?.sent(0) }
        let response: TransportResponse
        do {
            response = try await transport.send(sent, body: body, context: context)
        } catch let error as NetworkError where resendsUnsent && error.neverReachedServer {
            return try await resendUnsent(error, request, body, context, on: transport, deadlineHeader: deadlineHeader)
        }
        // Throwing drops the body, which stops the transfer.
        if let problem = ResponseHeadChecks.problem(in: response.head, limits: context.responseHeadLimits) { throw problem }
        guard let progress else { return response }
        // The one place a call's received bytes are counted: each response's body as the server
        // sends it (before decoding), from its head on.
        let hasBody = BridgeLink.framesBody(status: response.head.status.code, method: sent.method)
        // A transport that decodes content codings itself hands over more bytes than announced.
        let decoded =
            transport.decodesContentCodings && response.head.headerFields[.contentEncoding].map { $0.lowercased() != "identity" } == true
        if decoded { return TransportResponse(head: response.head, body: progress.counting(response.body, announced: nil)) }
        return TransportResponse(
            head: response.head, body: progress.counting(response.body, announced: hasBody ? response.body.expectedLength : 0))
    }

    /// An attempt the server never saw (``NetworkError/neverReachedServer``), once more, whatever
    /// the method: within the deadline and the host's retry budget, when the body can be sent again
    /// and the client resends such attempts (``Resilience/retriesUnsentRequests``); else `error`.
    @inline(never)
    private static func resendUnsent(
        _ error: NetworkError, _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, on transport: any Transport,
        deadlineHeader: HTTPField.Name?
    ) async throws -> TransportResponse {
        guard context.internals.resendsUnsent, RepeatRule.mayRepeat(request, body: body, reason: .unprocessed),
            context.remaining > .zero, !context.isCancelled,
            context.drawRetryBudget(host: request.authority ?? "")
        else { throw error }
        context.recorder.update { $0.unsentRetries += 1 }
        return try await attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader, resendsUnsent: false)
    }

    /// One `Cookie` field for all the request's cookies (RFC 6265 5.4), joined with `; `:
    /// `HTTPFields` splits a cookie header into one field per cookie (HTTP/2's crumbs), which
    /// transports would send as several lines, or join with commas (URLSession).
    static func joinCookies(_ request: inout HTTPRequest) {
        var count = 0
        for field in request.headerFields where field.name == .cookie { count += 1 }
        guard count > 1 else { return }
        let joined = request.headerFields[values: .cookie].joined(separator: "; ")
        var fields = HTTPFields()
        var placed = false
        for field in request.headerFields {
            if field.name == .cookie {
                if !placed { fields.append(HTTPField(name: .cookie, value: joined)) }
                placed = true
            } else {
                fields.append(field)
            }
        }
        request.headerFields = fields
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
        { request, body, context in try await link.intercept(request, body: body, context: context, next: next) }
    }
}

/// The end of the chain: one attempt on the transport (see ``CallChain/attempt(_:_:_:on:deadlineHeader:resendsUnsent:)``).
struct Attempt: Sendable {
    let transport: any Transport
    let deadlineHeader: HTTPField.Name?
    /// The client's proxies: a `407` through one is the proxy's answer, not the server's.
    let proxy: ProxyConfiguration

    func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        let response = try await CallChain.attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader)
        // A proxy that forwards plain http answers `407` itself; over a tunnel (https, and every
        // call on a transport that only tunnels) the transport reports it as the same error, and a
        // `407` inside a tunnel is the server's.
        if response.head.status.code == 407, request.scheme?.lowercased() == "http", let server = proxy.server(for: request) {
            throw NetworkError.proxyRefused(status: 407, proxy: server)
        }
        return response
    }
}

/// The built-in middle of the chain, which every call passes as one function: follow-up (each
/// redirect a new hop), the response cache around each hop, then for each attempt the bridge
/// (content decoding) around the queue's gate around what lies below: the network middleware,
/// then the attempt.
///
/// One function, not four links: each layer of closures is an async frame and an executor check
/// per call (the mock spent 8 task switches a call more with the four as links).
struct ChainMiddle: Sendable {
    let bridge: BridgeLink
    /// Whether network middleware run below: they may add credentials that the cache's and the
    /// de-duplication's keys cannot see (see `CacheLink` and `QueueGate`).
    let networkMiddlewareBelow: Bool
    /// The network middleware folded onto the attempt; `nil` when there are none.
    let below: Middleware.Next?
    let attempt: Attempt
    /// The client's cookie jar, around each hop (above the cache, whose key then sees the
    /// cookies); `nil` when the client keeps none.
    var cookies: CookieJar? = nil

    /// The steps' names, in the order requests pass them: the cookie jar's only when the client
    /// keeps cookies.
    var names: [String] {
        ["FollowUpLink"] + (cookies == nil ? [] : ["CookieJar"]) + ["CacheLink", "BridgeLink", "QueueGate"]
    }

    /// Follow-up: one hop (through the cache when the call has one), then the redirects it leads to.
    func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        // Without a cache the cache step would only pass the call on: the hop is called directly.
        let usesCache = context.cache != nil || context.cachePolicy == .cacheOnly
        if cookies != nil {
            let next: Middleware.Next = { request, body, context in
                try await self.withCookies(request, body, context, usesCache ? self.cachedHop : self.hop)
            }
            let response = try await next(request, body, context)
            guard FollowUpLink.redirects(response) else { return response }
            return try await FollowUpLink().follow(response, of: request, body: body, context: context, next: next)
        }
        let response = usesCache ? try await cachedHop(request, body, context) : try await hop(request, body, context)
        guard FollowUpLink.redirects(response) else { return response }
        return try await FollowUpLink().follow(response, of: request, body: body, context: context, next: usesCache ? cachedHop : hop)
    }

    /// One hop with the jar's cookies for its URL (after any the call set itself), storing what its
    /// answer sets: every hop of a redirect chain by its own URL.
    private func withCookies(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ next: Middleware.Next
    ) async throws -> TransportResponse {
        guard let jar = cookies else { return try await next(request, body, context) }
        var sent = request
        if let cookie = jar.header(for: request) {
            let own = request.headerFields[values: .cookie]
            sent.headerFields[.cookie] = (own + [cookie]).joined(separator: "; ")
        }
        let response = try await next(sent, body, context)
        // Only an answer to this call's own request sets cookies: not one the cache served, nor
        // another caller's transfer this call joined.
        if response.head.headerFields[.setCookie] != nil {
            let metrics = context.recorder.metrics
            if !metrics.deduplicated, metrics.cache != .hit, metrics.cache != .stale {
                jar.store(from: response.head, for: request)
            }
        }
        return response
    }

    /// The cache around one hop.
    @Sendable func cachedHop(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        try await CacheLink.run(request, body, context, networkMiddlewareBelow: networkMiddlewareBelow, next: hop)
    }

    /// The bridge around the gate around one attempt (and the network middleware before it).
    @Sendable func hop(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        let response: TransportResponse
        if let placement = context.placement {
            response = try await QueueGate(networkMiddlewareBelow: networkMiddlewareBelow).pass(
                request, body, context, placement, below ?? attempt.run)
        } else if let below {
            response = try await below(request, body, context)
        } else {
            response = try await attempt.run(request, body, context)
        }
        guard bridge.decodes(response.head, of: request) else { return response }
        return try bridge.decodedIfEncoded(response, to: request, context: context)
    }
}
