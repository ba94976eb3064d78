/// What one call cost, and where the time went.
///
/// Every successful call and every ``NetworkError`` from the client carries one. Durations are
/// measured on a monotonic clock. Phase timings come from the transport: a transport that cannot
/// measure them (URLSession on Linux) says so through ``phaseTimings`` instead of inventing numbers.
public struct RequestMetrics: Sendable, Hashable {
    /// Phase timings reported by the transport, or why there are none.
    public enum PhaseTimings: Sendable, Hashable {
        /// The transport measured these.
        case available(TransferTimings)
        /// The transport cannot measure phases; the reason says why.
        case unavailable(reason: String)
    }

    /// Offsets from the start of the transfer at which each phase had finished. A phase that did
    /// not happen (no TLS on `http`, no DNS for a reused connection) is `nil`.
    public struct TransferTimings: Sendable, Hashable {
        /// Name resolution done.
        public var dns: Duration?
        /// TCP connection established.
        public var connect: Duration?
        /// TLS handshake done.
        public var tls: Duration?
        /// The request was sent (head and body).
        public var requestSent: Duration?
        /// The first response byte arrived.
        public var firstByte: Duration?
        /// The transfer ended.
        public var total: Duration?

        /// Creates timings; every phase is optional.
        public init(
            dns: Duration? = nil, connect: Duration? = nil, tls: Duration? = nil,
            requestSent: Duration? = nil, firstByte: Duration? = nil, total: Duration? = nil
        ) {
            self.dns = dns
            self.connect = connect
            self.tls = tls
            self.requestSent = requestSent
            self.firstByte = firstByte
            self.total = total
        }
    }

    /// The transport's registered name, for example `urlsession`.
    public var transport: String
    /// Time spent waiting for a queue slot (zero without a queue).
    public var queued: Duration = .zero
    /// From handing the request to the middleware chain until the whole body was received.
    public var network: Duration?
    /// Time spent decoding the body into the output.
    public var decode: Duration?
    /// From the call's start to its result.
    public var total: Duration?
    /// The transport's phase timings.
    public var phaseTimings: PhaseTimings = .unavailable(reason: "the transport did not report phase timings")
    /// Request body bytes sent, when known.
    public var bytesSent: Int64?
    /// Response body bytes received.
    public var bytesReceived: Int64 = 0
    /// The negotiated HTTP version (`1.1`, `2`), when the transport knows it.
    public var httpVersion: String?
    /// Whether an existing connection was reused, when the transport knows it.
    public var reusedConnection: Bool?
    /// The peer's address, when the transport knows it.
    public var remoteAddress: String?
    /// Whether the response came from an identical call's transfer that this call joined
    /// (de-duplication in a ``RequestQueue``) rather than from a transfer of its own.
    public var deduplicated = false
    /// How many times the request was handed to the transport (more than one after retries or auth refresh).
    public var attempts: Int = 0
    /// Attempts sent once more because the first never reached the server (0 or 1 per attempt;
    /// see ``Resilience/retriesUnsentRequests``). They count among ``attempts`` too.
    public var unsentRetries: Int = 0
    /// Times the transport's own library sent the request again inside one attempt, where it can
    /// tell (libcurl, for an HTTP/2 stream the server refused or a reused connection that died
    /// before any answer: at most once, and only for a request that may be repeated). They are
    /// not counted among ``attempts``.
    public var transportResends: Int = 0
    /// Copies of the request hedging sent besides the first (0 or 1; see ``HedgingPolicy``).
    public var hedges: Int = 0
    /// Whether the hedged copy answered first.
    public var hedgeWon = false
    /// How many redirects the call followed (each hop is also an attempt).
    public var redirects: Int = 0
    /// Whether an attempt failed and was not retried because the host's ``RetryBudget`` was
    /// spent: the call ended with that attempt's answer.
    public var retryRefusedByBudget = false
    /// What the response cache did for the call; `nil` when it had no part in it (no cache, or a
    /// request the cache does not handle).
    public var cache: CacheResult?
    /// The age of the stored response served (``CacheResult/hit``, ``CacheResult/revalidated`` or
    /// ``CacheResult/stale``), in whole seconds.
    public var cacheAge: Duration?

    /// What the response cache did for a call.
    public enum CacheResult: String, Sendable, Hashable {
        /// A fresh stored response was served; nothing was sent.
        case hit
        /// Nothing usable was stored: the response came from the network (and was stored if it may be).
        case miss
        /// A stored response was revalidated: the server answered `304`, and the stored body was served.
        case revalidated
        /// A stored response past its lifetime was served: the policy allowed it
        /// (``CachePolicy/returnCacheElseLoad``, ``CachePolicy/cacheOnly``), or the network or the
        /// server failed under ``CachePolicy/staleIfError(maxStale:)`` or a response's `stale-if-error`.
        case stale
    }

    /// Creates empty metrics for a transport.
    /// - Parameter transport: The transport's name.
    public init(transport: String) {
        self.transport = transport
    }
}
