import Logging

/// What only the chain's own links read from a call's context, set by the client when the call
/// opens and the same in every frame below: the queue placement, the retry ledger, how the caller reads the body, the progress meter, and the client's logger.
///
/// Kept out of ``RequestContext``'s public fields, in one reference: copying the context per frame
/// copies one word for all of it. A call with no queue that reads its body whole shares its
/// client's instance, so it costs no allocation.
final class LinkContext: Sendable {
    /// The queue the call waits in, when it has one (see ``RequestQueue``).
    let placement: QueuePlacement?
    /// The client's retry budget per host, which retries, hedges, auth-refresh replays and resends
    /// of unsent attempts draw from; `nil` outside a client.
    let retryLedger: RetryBudgetLedger?
    /// Whether an attempt that never reached the server is sent once more
    /// (``Resilience/retriesUnsentRequests``).
    let resendsUnsent: Bool
    /// How the caller reads the body.
    enum BodyReading: Sendable {
        /// Outside a client: nobody knows.
        case unknown
        /// A client's call that takes it whole (see ``RequestContext/takesBodyWhole``).
        case whole
        /// As a stream (see ``RequestContext/streamsBody``).
        case streamed
    }
    /// How the caller reads the body.
    let bodyReading: BodyReading
    /// Where the call counts its bytes, when its endpoint or its batch asks for progress.
    let progress: ProgressMeter?
    /// For a long transfer (see ``TransferBounds``), when the whole exchange must have ended: what
    /// transports get as their backstop (``RequestContext/transferRemaining``); `nil` otherwise.
    let transferEnd: Moment?
    /// The client's logger, which a call's context reads unless its endpoint or a middleware set
    /// one of its own: kept here, it is not copied with every copy of the context (a real
    /// backend's handler is boxed, and each copy of a `Logger` retains the box).
    let logger: Logger

    init(
        placement: QueuePlacement?, retryLedger: RetryBudgetLedger?, resendsUnsent: Bool,
        bodyReading: BodyReading, progress: ProgressMeter? = nil, transferEnd: Moment? = nil, logger: Logger
    ) {
        self.logger = logger
        self.transferEnd = transferEnd
        self.placement = placement
        self.retryLedger = retryLedger
        self.resendsUnsent = resendsUnsent
        self.bodyReading = bodyReading
        self.progress = progress
    }

    /// A context outside a client: no queue or budget.
    static let none = LinkContext(
        placement: nil, retryLedger: nil, resendsUnsent: false, bodyReading: .unknown, logger: RequestContext.silent)

    /// These internals without the progress meter, for a transfer that is not the call's own (a
    /// hedged copy, a background revalidation): its bytes must not count as the call's.
    func withoutProgress() -> LinkContext {
        guard progress != nil else { return self }
        return LinkContext(
            placement: placement, retryLedger: retryLedger, resendsUnsent: resendsUnsent, bodyReading: bodyReading,
            transferEnd: transferEnd, logger: logger)
    }

    /// These internals for a call with a queue, a streamed body or progress: a copy with its
    /// placement, reading, meter and, for a long transfer, its end. (A buffered call without them
    /// shares its client's instance.)
    func forCall(placement: QueuePlacement?, streams: Bool, progress: ProgressMeter?, transferEnd: Moment?) -> LinkContext {
        LinkContext(
            placement: placement, retryLedger: retryLedger, resendsUnsent: resendsUnsent,
            bodyReading: streams ? .streamed : .whole, progress: progress, transferEnd: transferEnd, logger: logger)
    }
}
