import HTTPTypes

/// A built-in step of the chain's middle: follow-up, the wings' hop links (the cookie jar, the
/// response cache), the bridge, the queue's gate, and the attempt below them. Each holds the step after it as a generic
/// parameter, so the middle is nested once, when the client is built, into one concrete type that
/// the compiler specialises into straight-line code: no closure per layer, no existential call
/// between steps (each layer of closures was an async frame and an executor check per call).
///
/// The steps are not ``Middleware`` (they need no `next` closure), but each is a named link of the
/// one chain: ``NetworkClient/linkOrder`` lists them by ``names``.
///
/// Each `run` is `@inline(__always)`, so the nested steps become one async function: as separate
/// frames they cost every call two more executor checks (`swift_task_switch`: 7 instead of 5 a call
/// on the mock, 11 instead of 9 on curl, `courier-bench count`), the cost the fused function they
/// replace was written to avoid.
protocol BuiltInLink: Sendable {
    /// This step's name, then the names of the steps below it, in the order requests pass them.
    var names: [String] { get }
    /// Runs the call through this step and the ones below it.
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
}

extension BuiltInLink {
    /// This step as a middleware's `next`, for the links that take one (the wings' hop links,
    /// follow-up's hops, the queue's shared transfers).
    var asNext: Middleware.Next {
        { request, body, context in try await self.run(request, body, context) }
    }
}

/// Follow-up (`FollowUpLink`): one hop, then the redirects it leads to, each hop through `Next`.
struct FollowUpStep<Next: BuiltInLink>: BuiltInLink {
    let next: Next

    /// The step's name in ``NetworkClient/linkOrder`` and in a debug trace.
    static var name: String { "FollowUpLink" }

    var names: [String] { [Self.name] + next.names }

    @inline(__always)
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
    {
        #if DEBUG
            LinkTrace.pass(Self.name)
        #endif
        let response = try await next.run(request, body, context)
        guard FollowUpLink.redirects(response) else { return response }
        return try await FollowUpLink().follow(response, of: request, body: body, context: context, next: next.asNext)
    }
}

/// The wings' links around each hop (``WingParts/hop``: the cookie jar's, then the response
/// cache's, whose key then sees the cookies), below follow-up and above the bridge: ordinary middleware, folded onto the step below
/// once, when the client is built, so a call pays one closure call per link.
struct HopStep<Next: BuiltInLink>: BuiltInLink {
    let hops: [any Middleware]
    let next: Next
    /// The links folded onto `next`.
    private let folded: Middleware.Next

    init(hops: [any Middleware], next: Next) {
        self.hops = hops
        self.next = next
        var folded = next.asNext
        for hop in hops.reversed() { folded = LinkChain.bind(hop, to: folded) }
        self.folded = folded
    }

    var names: [String] { hops.map { String(describing: type(of: $0)) } + next.names }

    @inline(__always)
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
    {
        try await folded(request, body, context)
    }
}

/// The bridge (`BridgeLink`): `Accept-Encoding` (a default field, set once per client) and the
/// decoding of the response body, with its caps.
struct BridgeStep<Next: BuiltInLink>: BuiltInLink {
    let bridge: BridgeLink
    let next: Next

    /// The step's name in ``NetworkClient/linkOrder`` and in a debug trace.
    static var name: String { "BridgeLink" }

    var names: [String] { [Self.name] + next.names }

    @inline(__always)
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
    {
        #if DEBUG
            LinkTrace.pass(Self.name)
        #endif
        let response = try await next.run(request, body, context)
        guard bridge.decodes(response.head, of: request) else { return response }
        return try bridge.decodedIfEncoded(response, to: request, context: context)
    }
}

/// The queue's gate (`QueueGate`): a call with a ``RequestQueue`` waits here for a slot (or shares
/// an identical call's transfer); any other passes straight on. A ``CachePolicy/cacheOnly`` call
/// that no cache served stops here, before the queue and the network.
struct GateStep<Next: BuiltInLink>: BuiltInLink {
    /// Whether network middleware run below: automatic de-duplication is then off.
    let networkMiddlewareBelow: Bool
    let next: Next

    /// The step's name in ``NetworkClient/linkOrder`` and in a debug trace.
    static var name: String { "QueueGate" }

    var names: [String] { [Self.name] + next.names }

    @inline(__always)
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
    {
        #if DEBUG
            LinkTrace.pass(Self.name)
        #endif
        if context.cachePolicy == .cacheOnly { throw NetworkError.notCached(request, why: "no cache served it") }
        guard let placement = context.placement else { return try await next.run(request, body, context) }
        return try await QueueGate(networkMiddlewareBelow: networkMiddlewareBelow).pass(request, body, context, placement, next.asNext)
    }
}

/// The bottom of the middle: the network middleware (once per attempt, folded onto the attempt
/// when the client was built), else the attempt itself. Named by the chain, not here.
///
/// `Shape` only tells the chain's two shapes apart (``PlainMiddle``, ``MiddleWithHops``), so that
/// they share no specialised step: when the steps below ``HopStep`` were the plain shape's too,
/// the plain shape's call took one more executor switch (`courier-bench count`: 6 instead of 5 a
/// call on the mock, 10 instead of 9 on curl).
struct AttemptStep<Shape>: BuiltInLink {
    let attempt: Attempt
    /// The network middleware folded onto the attempt; `nil` when there are none.
    let below: Middleware.Next?

    var names: [String] { [] }

    @inline(__always)
    nonisolated(nonsending) func run(_ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext) async throws
        -> TransportResponse
    {
        if let below { return try await below(request, body, context) }
        return try await attempt.run(request, body, context)
    }
}

/// The middle without wings' hop links (see ``AttemptStep``).
enum PlainMiddle {}
/// The middle with the wings' hop links (see ``AttemptStep``).
enum MiddleWithHops {}
