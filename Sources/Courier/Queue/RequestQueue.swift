import HTTPTypes

/// Limits how many calls run at once, in total and per host, and orders the ones that wait.
///
/// Give a client a default queue (``NetworkClient/init(configuration:transport:middleware:networkMiddleware:observers:queue:)``)
/// or name one per API object (`requestQueue`). A call holds a slot from the moment it leaves the
/// queue until its response body has been read; each retry attempt queues again.
///
/// ```swift
/// let images = try RequestQueue(name: "images", limits: .init(maxConcurrent: 8, maxConcurrentPerHost: 4))
/// final class GetImage: BaseAPI<Data>, @unchecked Sendable {
///     override var requestQueue: RequestQueue? { images }
///     override var priority: RequestPriority { .low }
/// }
/// ```
///
/// - **Order.** A call beyond the limits waits; waiting calls start highest ``RequestPriority``
///   first, oldest first within a priority. A call whose host is at its limit does not hold back
///   calls to other hosts.
/// - **Bounded waiting.** At most ``Limits/maxWaiting`` calls wait; one more fails at once with
///   ``NetworkError/Kind/queueFull``. A waiting call also fails when its deadline passes
///   (``NetworkError/Kind/timedOut`` in phase `queued`).
/// - **Suspend and resume.** ``suspend()`` starts nothing new (running calls finish);
///   ``resume()`` starts waiting calls in priority order. Cancelling a waiting call removes it at once.
/// - **De-duplication.** Identical calls in flight share one transfer (see ``Deduplication``):
///   the first caller's request is sent (under its deadline), every caller gets the same response, each decodes it
///   for itself. One caller cancelling cancels only that caller; the transfer is cancelled when
///   the last caller sharing it cancels. A caller that joined another's transfer has
///   ``RequestMetrics/deduplicated`` set.
/// - **Group cancellation.** ``cancelAll(_:)`` cancels every call with a tag, of a team, of a
///   batch, or all of them, in any state: waiting, running, or between retry attempts.
///
/// The time a call waited is ``RequestMetrics/queued``.
public final class RequestQueue: Sendable {
    /// The queue's name, for logs.
    public let name: String
    /// The queue's limits.
    public let limits: Limits
    /// Where the waiting time is read.
    let timeSource: any TimeSource

    struct State {
        var slots: QueueSlots
        var nextID: UInt64 = 0
        /// Calls waiting for a slot, resumed when ``QueueSlots`` starts them.
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// Every call running through the queue, for group cancellation.
        var calls: [UInt64: TrackedCall] = [:]
        /// Transfers shared by identical calls, by key.
        var shared: [String: SharedTransfer] = [:]

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    struct TrackedCall {
        var membership: CallMembership
        var cancel: @Sendable () -> Void
    }

    let state: Locked<State>
    /// The random secret this queue keys credential fingerprints with (``sharingKey(for:_:context:)``).
    let credentialKey = FingerprintKey()

    /// Creates a queue.
    /// - Parameters:
    ///   - name: A name for logs; `default` by default.
    ///   - limits: The limits; 16 at once, 6 per host, 1,000 waiting by default.
    ///   - timeSource: Where the waiting time is read; the system clock by default.
    /// - Throws: ``ConfigurationError`` when a limit is out of range.
    public init(name: String = "default", limits: Limits = Limits(), timeSource: any TimeSource = SystemTimeSource())
        throws(ConfigurationError)
    {
        try limits.validate()
        self.name = name
        self.limits = limits
        self.timeSource = timeSource
        state = Locked(State(slots: QueueSlots(limits: limits)))
    }

    /// What the queue holds at one moment.
    public struct Status: Sendable, Hashable {
        /// Calls holding a slot.
        public var running: Int
        /// Calls waiting for a slot.
        public var waiting: Int
        /// Calls tracked from start to result (running, waiting, or between attempts).
        public var calls: Int
        /// Transfers in flight that identical calls may join.
        public var sharedTransfers: Int
        /// Callers waiting on those transfers (the first caller of each included).
        public var sharingCallers: Int
        /// Whether the queue is suspended.
        public var isSuspended: Bool
        /// Calls holding a slot, by host (`host:port` as the request names it).
        public var runningByHost: [String: Int] = [:]
        /// Calls waiting for a slot, by host.
        public var waitingByHost: [String: Int] = [:]
        /// Each host's adaptive limit now (only with ``Limits/adaptive``; hosts not measured yet
        /// are at ``AdaptiveConcurrency/initialLimit``).
        public var adaptiveLimitByHost: [String: Int] = [:]

        init(running: Int, waiting: Int, calls: Int, sharedTransfers: Int, sharingCallers: Int, isSuspended: Bool) {
            self.running = running
            self.waiting = waiting
            self.calls = calls
            self.sharedTransfers = sharedTransfers
            self.sharingCallers = sharingCallers
            self.isSuspended = isSuspended
        }
    }

    /// A snapshot of the queue.
    public var status: Status {
        state.withLock {
            var status = Status(
                running: $0.slots.running, waiting: $0.slots.waitingCount, calls: $0.calls.count, sharedTransfers: $0.shared.count,
                sharingCallers: $0.shared.values.reduce(0) { $0 + $1.callers.count }, isSuspended: $0.slots.isSuspended)
            status.runningByHost = $0.slots.runningByHost.filter { $0.value > 0 }
            status.waitingByHost = $0.slots.waitingByHost
            status.adaptiveLimitByHost = $0.slots.adaptiveLimits.mapValues(\.allowed)
            return status
        }
    }

    /// Whether the queue is suspended.
    public var isSuspended: Bool { state.withLock { $0.slots.isSuspended } }

    /// Starts nothing new until ``resume()``; calls already running go on.
    public func suspend() {
        state.withLock { $0.slots.suspend() }
    }

    /// Starts waiting calls again, highest priority first.
    public func resume() {
        let started = state.withLock { state in Self.takeWaiters(state.slots.resume(), from: &state) }
        for waiter in started { waiter.resume() }
    }

    /// Cancels every call in the group, whatever its state. Each one ends with
    /// ``NetworkError/Kind/cancelled``.
    /// - Parameter group: Which calls.
    /// - Returns: How many calls were cancelled.
    @discardableResult
    public func cancelAll(_ group: CallGroup) -> Int {
        let cancels = state.withLock { state in state.calls.values.filter { $0.membership.belongs(to: group) }.map(\.cancel) }
        for cancel in cancels { cancel() }
        return cancels.count
    }

    // MARK: Tracking a call from start to result

    /// Runs one call so that group cancellation can reach it: the call runs in its own task, which
    /// ``cancelAll(_:)`` (or cancelling the caller) cancels.
    func tracking<Result: Sendable>(
        _ membership: CallMembership, _ operation: @escaping @Sendable () async -> Result
    ) async -> Result {
        let task = Task { await operation() }
        let id = state.withLock { state in
            let id = state.makeID()
            state.calls[id] = TrackedCall(membership: membership, cancel: { task.cancel() })
            return id
        }
        defer { _ = state.withLock { $0.calls.removeValue(forKey: id) } }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    // MARK: Slots

    /// Waits for a slot for a call to `host`.
    /// - Throws: ``NetworkError/Kind/queueFull`` when too many wait; ``NetworkError/Kind/cancelled``
    ///   when the task is cancelled or the call's deadline passes while waiting (the call leaves
    ///   the queue at once).
    func acquireSlot(host: String, priority: RequestPriority, context: RequestContext) async throws {
        let id = state.withLock { $0.makeID() }
        try await context.withCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                let action = state.withLock { state -> QueueSlots.AdmitAction? in
                    // Checked under the lock: a cancel handler that ran before this found nothing to withdraw.
                    if context.isCancelled { return nil }
                    let action = state.slots.admit(
                        id: id, host: host, priority: priority,
                        remainingNanoseconds: limits.shedsLateCalls ? context.remaining.wholeNanoseconds : nil)
                    if action == .wait { state.waiters[id] = waiter }
                    return action
                }
                switch action {
                case nil: waiter.resume(throwing: NetworkError.cancelled(phase: .queued))
                case .start: waiter.resume()
                case .wait: break
                case .rejectFull:
                    waiter.resume(
                        throwing: NetworkError(
                            kind: .queueFull, phase: .queued,
                            message: "queue '\(name)' already has \(limits.maxWaiting) calls waiting (limits.maxWaiting)"))
                case .rejectLate(let ahead, let perCall):
                    waiter.resume(
                        throwing: NetworkError(
                            kind: .queueFull, phase: .queued,
                            message:
                                "queue '\(name)' sheds the call: \(ahead) calls wait for \(host) ahead of it, and at \(perCall / 1_000_000) ms a call they take longer than the call's deadline allows"
                        ))
                }
            }
        } onCancel: { [self] in
            let waiter = state.withLock { state in
                state.slots.withdraw(id: id) ? state.waiters.removeValue(forKey: id) : nil
            }
            waiter?.resume(throwing: NetworkError.cancelled(phase: .queued))
        }
    }

    /// Gives back a slot taken by ``acquireSlot(host:priority:context:)`` and starts the calls that fit now.
    /// - Parameters:
    ///   - heldNanoseconds: How long the call held it, for adaptive limits; `nil` when unknown.
    ///   - failed: Whether the call timed out or lost its connection (adaptive limits back off).
    func releaseSlot(host: String, heldNanoseconds: Int64? = nil, failed: Bool = false) {
        let started = state.withLock { state in
            Self.takeWaiters(state.slots.release(host: host, heldNanoseconds: heldNanoseconds, failed: failed), from: &state)
        }
        for waiter in started { waiter.resume() }
    }

    private static func takeWaiters(_ ids: [UInt64], from state: inout State) -> [CheckedContinuation<Void, any Error>] {
        ids.compactMap { state.waiters.removeValue(forKey: $0) }
    }
}
