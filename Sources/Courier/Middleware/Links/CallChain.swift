import HTTPTypes

/// The one list of links every call of a client passes, and the one fold that turns it into a
/// function. Built once per client.
///
/// The order (requests pass it top to bottom, responses come back bottom to top):
/// 1. team headers (`TeamHeadersMiddleware`, when the configuration has header rules);
/// 2. the application middleware, once per call;
/// 3. retry (`RetryMiddleware`, when the configuration has a retry policy);
/// 4. follow-up (`FollowUpLink`): redirects;
/// 5. (the response cache's slot, when it comes;)
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
/// per call); its behaviour is the same either way.

struct CallChain: Sendable {
    /// The links in the order requests pass them, without the transport.
    let links: [any Middleware]
    /// How many of ``links`` are once-per-call middleware (team headers, the application's, retry).
    let applicationCount: Int
    /// The whole chain: the links, then the transport.
    let run: Middleware.Next

    /// Builds the chain.
    /// - Parameters:
    ///   - headerRules: The team header rules; no link when empty.
    ///   - application: Once-per-call middleware, in the order requests pass them.
    ///   - retry: The retry policy; no link when `nil`.
    ///   - decompression: The bridge's content decoding.
    ///   - network: Once-per-attempt middleware, in the order requests pass them.
    ///   - transport: The end of the chain.
    init(
        headerRules: [HeaderRule], application: [any Middleware], retry: RetryPolicy?, decompression: Decompression = Decompression(),
        network: [any Middleware], transport: any Transport
    ) {
        var links: [any Middleware] = []
        if !headerRules.isEmpty { links.append(TeamHeadersMiddleware(rules: headerRules)) }
        links += application
        if let retry { links.append(RetryMiddleware(policy: retry)) }
        applicationCount = links.count
        links.append(FollowUpLink())
        links.append(BridgeLink(decompression: decompression, transportDecodes: transport.decodesContentCodings))
        links.append(QueueGate())
        links += network.map(NetworkLink.init)
        self.links = links
        var next: Middleware.Next = { request, body, context in
            context.recorder.update { $0.attempts += 1 }
            let response = try await transport.send(request, body: body, context: context)
            // Throwing drops the body, which stops the transfer.
            if let problem = ResponseHeadChecks.problem(in: response.head, limits: context.responseHeadLimits) { throw problem }
            return response
        }
        for link in links.reversed() {
            next = Self.bind(link, to: next)
        }
        self.run = next
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
