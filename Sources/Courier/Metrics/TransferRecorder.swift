/// Where a transport reports what it knows about one call while it runs: the current phase
/// (so a timeout can say where it struck) and the figures for ``RequestMetrics``.
///
/// It is a view of the call's one record, which also keeps the call's life (whether its deadline
/// has passed, whether it has ended: `CallLifecycle`) under the same lock.
///
/// Thread-safe; every method is cheap and never throws. One recorder belongs to one call; copies
/// of it share the same figures (it is a handle on one locked record, made with one allocation).
public struct TransferRecorder: Sendable {
    private struct State {
        var phase: NetworkError.Phase = .building
        var metrics: RequestMetrics
        /// The call's life and deadline (``CallLifecycle``, ``CallDeadline``), kept here to share
        /// the allocation and the lock.
        var lifecycle: CallLifecycle
    }

    private let state: Locked<State>

    /// Creates a recorder for a call over the named transport.
    /// - Parameter transport: The transport's name.
    public init(transport: String) {
        self.init(transport: transport, lifecycle: CallLifecycle())
    }

    init(transport: String, lifecycle: CallLifecycle) {
        state = Locked(State(metrics: RequestMetrics(transport: transport), lifecycle: lifecycle))
    }

    /// Runs `body` on the call's lifecycle, under the recorder's lock.
    func withLifecycle<R>(_ body: (inout CallLifecycle) -> R) -> R {
        state.withLock { body(&$0.lifecycle) }
    }

    /// Admits the call (``CallLifecycle/admit(_:)``), moves it to `phase` and changes its
    /// metrics, under one lock.
    func admit(_ holdings: CallLifecycle.Holdings, entering phase: NetworkError.Phase, _ change: (inout RequestMetrics) -> Void) {
        state.withLock { state in
            state.lifecycle.admit(holdings)
            change(&state.metrics)
            state.phase = phase
        }
    }

    /// The phase the call is in now.
    public var phase: NetworkError.Phase { state.withLock { $0.phase } }

    /// Marks the call as being in `phase`.
    /// - Parameter phase: The phase now running.
    public func enter(_ phase: NetworkError.Phase) {
        state.withLock { $0.phase = phase }
    }

    /// Changes the metrics gathered so far.
    /// - Parameter change: Edits the metrics; runs under a lock, so keep it short. The call's
    ///   deadline shares that lock: the closure must not read the context's cancellation or
    ///   deadline, nor register a handler (the lock is not reentrant).
    public func update(_ change: (inout RequestMetrics) -> Void) {
        state.withLock { change(&$0.metrics) }
    }

    /// Changes the metrics and marks the call as being in `phase`, under one lock.
    /// - Parameters:
    ///   - phase: The phase now running.
    ///   - change: Edits the metrics; runs under a lock, so keep it short (and away from the
    ///     context's deadline, see ``update(_:)``).
    public func update(entering phase: NetworkError.Phase, _ change: (inout RequestMetrics) -> Void) {
        state.withLock { state in
            change(&state.metrics)
            state.phase = phase
        }
    }

    /// Changes the metrics and returns a copy of them, under one lock.
    /// - Parameter change: Edits the metrics; runs under a lock, so keep it short (and away from
    ///   the context's deadline, see ``update(_:)``).
    /// - Returns: The metrics after the change.
    public func updated(_ change: (inout RequestMetrics) -> Void) -> RequestMetrics {
        state.withLock { state in
            change(&state.metrics)
            return state.metrics
        }
    }

    /// A copy of the metrics gathered so far.
    public var metrics: RequestMetrics { state.withLock { $0.metrics } }
}
