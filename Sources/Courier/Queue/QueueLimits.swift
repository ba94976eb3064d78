extension RequestQueue {
    /// The limits of a ``RequestQueue``. Every default is finite.
    public struct Limits: Sendable, Hashable {
        /// Calls running at once, over every host: 16 by default.
        public var maxConcurrent = 16
        /// Calls running at once to one host (scheme-less `host:port`): 6 by default.
        public var maxConcurrentPerHost = 6
        /// Calls that may wait for a slot: 1,000 by default. A call arriving when this many wait
        /// fails at once with ``NetworkError/Kind/queueFull``.
        public var maxWaiting = 1000
        /// A per-host limit that follows measured latency between 1 and ``maxConcurrentPerHost``
        /// (see ``AdaptiveConcurrency``); `nil` (the default) keeps the fixed
        /// ``maxConcurrentPerHost``.
        public var adaptive: AdaptiveConcurrency?
        /// Whether a call that cannot start before its deadline fails at once instead of waiting
        /// to time out: on by default. It fails with ``NetworkError/Kind/queueFull`` in phase
        /// `queued` when the calls waiting for its host ahead of it, in rounds of the host's limit,
        /// would take longer than the call has left even at the shortest time a call to the host
        /// held its slot lately (the rounds after the first: the running calls may end at any
        /// moment). Being a floor, the estimate never sheds a call that a burst's slow start only
        /// seems to delay. With ``adaptive`` limits the adaptive limiter's estimate is used instead
        /// (every round at the host's recent average). Nothing is estimated before a host's first
        /// call has finished, or while the queue is suspended.
        public var shedsLateCalls = true
        /// Whether identical calls in flight share one transfer (see ``Deduplication``): on by default.
        public var deduplicates = true
        /// The request headers (lowercase) whose values are part of an automatic de-duplication
        /// key: two calls that differ in one of them never share a transfer. Credentials
        /// (``CredentialScope``) need not be listed: every key ends with a keyed fingerprint of them.
        public var varyingHeaderNames: Set<String> = ["accept", "accept-encoding", "accept-language", "range"]
        /// The request headers (lowercase) that say whom a call is for without being secrets (a
        /// tenant, an account): two calls that differ in one of them never share a transfer, whether
        /// the key is automatic or given (``Deduplication/key(_:)``). Fingerprinted with the
        /// credentials, never kept as text. `X-Tenant-Id`, `X-Account-Id`, `X-Organization-Id` and
        /// `X-User-Id` by default; add a service's own.
        public var identityHeaderNames: Set<String> = ["x-tenant-id", "x-account-id", "x-organization-id", "x-user-id"] {
            // Compared with lowercase field names: kept lowercase however they are written.
            didSet {
                if identityHeaderNames.contains(where: CredentialScope.hasUppercase) {
                    identityHeaderNames = Set(identityHeaderNames.map { $0.lowercased() })
                }
            }
        }

        /// The allowed range of ``maxConcurrent`` and ``maxConcurrentPerHost``.
        public static let concurrencyRange: ClosedRange<Int> = 1...10_000
        /// The allowed range of ``maxWaiting``.
        public static let waitingRange: ClosedRange<Int> = 0...1_000_000

        /// Limits with every default.
        public init() {}

        /// Limits with the given concurrency, every other value at its default.
        /// - Parameters:
        ///   - maxConcurrent: Calls running at once.
        ///   - maxConcurrentPerHost: Calls running at once to one host; `maxConcurrent` when `nil`.
        ///   - maxWaiting: Calls that may wait.
        public init(maxConcurrent: Int, maxConcurrentPerHost: Int? = nil, maxWaiting: Int = 1000) {
            self.maxConcurrent = maxConcurrent
            self.maxConcurrentPerHost = maxConcurrentPerHost ?? maxConcurrent
            self.maxWaiting = maxWaiting
        }

        /// Checks every value's range.
        /// - Parameter source: Where the values came from, for the error.
        /// - Throws: ``ConfigurationError`` naming the first value out of range.
        public func validate(source: String = "code") throws(ConfigurationError) {
            var configuration = ClientConfiguration()
            configuration.queue = self
            try ConfigurationKey.checkBounds(of: configuration, prefix: "queue.", source: source)
            try checkRelations(source: source)
        }

        /// What the key table's ranges cannot say: the adaptive limits within the per-host maximum.
        func checkRelations(source: String) throws(ConfigurationError) {
            try adaptive?.checkRelations(maximum: maxConcurrentPerHost, source: source)
        }
    }
}
