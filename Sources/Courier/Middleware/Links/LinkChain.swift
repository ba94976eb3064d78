import Foundation
import HTTPTypes

/// The one list of links every call of a client passes, and the one fold that turns it into a
/// function. Built once per client.
///
/// The order (requests pass it top to bottom, responses come back bottom to top):
/// 1. team headers (`TeamHeadersMiddleware`, when the configuration has header rules);
/// 2. the application middleware, once per call;
/// 3. retry (`RetryMiddleware`, when the configuration has a retry policy), then the wings'
///    once-per-call links: the circuit breaker and hedging of `CourierResilience`, when the
///    configuration has them;
/// 4. follow-up (`FollowUpLink`): redirects;
/// 5. the wings' links around each hop (`HopStep`), when their configuration turns them on: the
///    cookie jar of `CourierCookies` (the jar's cookies for the hop's URL, and what its answer
///    sets), then the response cache of `CourierCache` (`CacheLink`);
/// 6. the bridge (`BridgeLink`): `Accept-Encoding`, and decoding of the response body (see
///    ``Decompression``);
/// 7. the queue's gate (`QueueGate`): calls that have a ``RequestQueue`` wait for a slot here (and
///    a ``CachePolicy/cacheOnly`` call that no cache served fails);
/// 8. the network middleware, once per attempt (`NetworkLink` checks that each calls `next` once);
/// 9. the transport, after counting the attempt; every head it returns passes
///    `ResponseHeadChecks` (the call's ``ResponseHeadLimits`` and `Content-Length`) here, so a
///    malformed head fails the same way on every transport.
///
/// The outer links and the network middleware are ordinary ``Middleware``; the built-in middle
/// (follow-up, the wings' hop links, bridge, queue gate) is named links of their own (`BuiltInLink`),
/// nested once at client build into one concrete generic type that specialises into straight-line
/// code. None is recognised by its type, nothing runs before the fold, every call takes the same
/// path through it, ``NetworkClient/linkOrder`` names every step, and `MiddlewareChainTests` pins
/// the whole order.

struct LinkChain: Sendable {
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
    /// The built-in middle's steps, by name (see ``BuiltInLink``).
    private let middleNames: [String]

    /// Builds the chain.
    /// - Parameters:
    ///   - configuration: The header rules, retry policy, resilience and decompression settings:
    ///     a link for each that is set.
    ///   - application: Once-per-call middleware, in the order requests pass them.
    ///   - ledger: The client's retry budget per host, which retry, hedging and the resend of
    ///     unsent attempts draw from.
    ///   - wingOuter: The wings' once-per-call links (see ``WingParts/outer``), below retry.
    ///   - network: Once-per-attempt middleware, in the order requests pass them.
    ///   - transport: The end of the chain.
    ///   - hops: The wings' links around each hop (see ``WingParts/hop``), in the order requests
    ///     pass them; no step when empty.
    ///   - jsonEncoder: The client's JSON encoder: a ``RequestBody/json(_:encoder:)-(_,JSONEncoder?)`` body that a
    ///     middleware made is written with it where the middleware hands it on (to the built-in
    ///     middle, or to the transport), as an endpoint's is by the request builder.
    init(
        configuration: ClientConfiguration, application: [any Middleware], network: [any Middleware], transport: any Transport,
        ledger: RetryBudgetLedger, wingOuter: [any Middleware] = [], hops: [any Middleware] = [], jsonEncoder: JSONEncoder = JSONEncoder()
    ) {
        var outer: [any Middleware] = []
        if !configuration.headerRules.isEmpty { outer.append(TeamHeadersMiddleware(rules: configuration.headerRules)) }
        outer += application
        self.ledger = ledger
        if let retry = configuration.retry { outer.append(RetryMiddleware(policy: retry, ledger: ledger)) }
        // The wings' once-per-call links below retry: the circuit breaker, then hedging.
        outer += wingOuter
        self.outer = outer
        self.network = network
        let attempt = Attempt(
            transport: transport, deadlineHeader: configuration.resilience.deadlineHeaderName, proxy: configuration.proxy)
        var below: Middleware.Next?
        if !network.isEmpty {
            var next: Middleware.Next = { request, body, context in
                try await attempt.run(request, body?.encodingJSON(with: jsonEncoder), context)
            }
            for link in network.reversed() {
                next = Self.bind(NetworkLink(wrapped: link), to: next)
            }
            below = next
        }
        // The built-in middle, nested once into one concrete type per shape (with or without the
        // wings' hop links): follow-up, the hop links, the bridge, the gate, then the attempt.
        let networkBelow = below != nil
        let bridge = BridgeLink(decompression: configuration.decompression, transportDecodes: transport.decodesContentCodings)
        var next: Middleware.Next
        if !hops.isEmpty {
            let bridged = BridgeStep(
                bridge: bridge,
                next: GateStep(networkMiddlewareBelow: networkBelow, next: AttemptStep<MiddleWithHops>(attempt: attempt, below: below)))
            let middle = FollowUpStep(next: HopStep(hops: hops, next: bridged))
            middleNames = middle.names
            next = { request, body, context in try await middle.run(request, body?.encodingJSON(with: jsonEncoder), context) }
        } else {
            let bridged = BridgeStep(
                bridge: bridge,
                next: GateStep(networkMiddlewareBelow: networkBelow, next: AttemptStep<PlainMiddle>(attempt: attempt, below: below)))
            let middle = FollowUpStep(next: bridged)
            middleNames = middle.names
            next = { request, body, context in try await middle.run(request, body?.encodingJSON(with: jsonEncoder), context) }
        }
        for link in outer.reversed() {
            next = Self.bind(link, to: next)
        }
        self.run = next
    }

    /// The chain's names in order: the outer links, the built-in middle's steps
    /// (``BuiltInLink/names``), the network middleware by their own names, then the transport.
    func names(transport: any Transport) -> [String] {
        outer.map { String(describing: type(of: $0)) } + middleNames + network.map { String(describing: type(of: $0)) }
            + ["transport \(transport.name)"]
    }

    /// One attempt on the transport, the end of the chain, in three named steps: the request
    /// rules (``requestRules(_:_:deadlineHeader:)``), the send (counted, and once more when it never
    /// reached the server: ``resendUnsent(_:_:_:_:on:deadlineHeader:)``), and the response checks
    /// (``responseChecks(_:to:_:on:)``), so a malformed head fails the same way on every transport.
    static func attempt(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, on transport: any Transport,
        deadlineHeader: HTTPField.Name?, resendsUnsent: Bool = true
    ) async throws -> TransportResponse {
        let sent = try requestRules(request, context, deadlineHeader: deadlineHeader)
        context.recorder.update { $0.attempts += 1 }
        // Each attempt that sends a body sends it from the first byte (a redirect that drops the
        // body keeps the count of the hop that sent it).
        if body != nil { context.internals.progress?.sent(0) }
        let response: TransportResponse
        do {
            response = try await transport.send(sent, body: body, context: context)
        } catch let error as NetworkError where resendsUnsent && error.neverReachedServer {
            return try await resendUnsent(error, request, body, context, on: transport, deadlineHeader: deadlineHeader)
        }
        return try responseChecks(response, to: sent, context, on: transport)
    }

    /// What reaches a transport: the one target rule passed, no framing header (whichever
    /// middleware wrote it last), one `Cookie` field, and the time left in `deadlineHeader` when
    /// the client sends one.
    static func requestRules(_ request: HTTPRequest, _ context: RequestContext, deadlineHeader: HTTPField.Name?) throws
        -> HTTPRequest
    {
        if let problem = RequestTarget.problem(in: request) { throw problem }
        // One pass over the fields: framing refused, cookies counted.
        var cookieFields = 0
        for field in request.headerFields {
            if HeaderValidation.isFraming(field.name) { throw HeaderValidation.framingRefused(field.name) }
            if field.name == .cookie { cookieFields += 1 }
        }
        var sent = deadlineHeader.map { stamped(request, $0, context) } ?? request
        if cookieFields > 1 { joinCookies(&sent) }
        return sent
    }

    /// What a transport's answer passes: the head's limits and `Content-Length`
    /// (`ResponseHeadChecks`; throwing drops the body, which stops the transfer), and the
    /// counting of the body's bytes for the call's progress.
    static func responseChecks(_ response: TransportResponse, to sent: HTTPRequest, _ context: RequestContext, on transport: any Transport)
        throws -> TransportResponse
    {
        if let problem = ResponseHeadChecks.problem(in: response.head, limits: context.responseHeadLimits) { throw problem }
        guard let progress = context.internals.progress else { return response }
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
    static func bind(_ link: any Middleware, to next: @escaping Middleware.Next) -> Middleware.Next {
        { request, body, context in
            #if DEBUG
                LinkTrace.pass(String(describing: type(of: (link as? NetworkLink)?.wrapped ?? link)))
            #endif
            return try await link.intercept(request, body: body, context: context, next: next)
        }
    }
}

/// The end of the chain: one attempt on the transport (see ``LinkChain/attempt(_:_:_:on:deadlineHeader:resendsUnsent:)``).
struct Attempt: Sendable {
    let transport: any Transport
    let deadlineHeader: HTTPField.Name?
    /// The client's proxies: a `407` through one is the proxy's answer, not the server's.
    let proxy: ProxyConfiguration

    func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws -> TransportResponse {
        #if DEBUG
            LinkTrace.pass("transport \(transport.name)")
        #endif
        let response = try await LinkChain.attempt(request, body, context, on: transport, deadlineHeader: deadlineHeader)
        // A proxy that forwards plain http answers `407` itself; over a tunnel (https, and every
        // call on a transport that only tunnels) the transport reports it as the same error, and a
        // `407` inside a tunnel is the server's.
        if response.head.status.code == 407, request.scheme?.lowercased() == "http", let server = proxy.server(for: request) {
            throw NetworkError.proxyRefused(status: 407, proxy: server)
        }
        return response
    }
}
