/// Where a transport reports what it knows about one call while it runs: the current phase
/// (so a timeout can say where it struck) and the figures for ``RequestMetrics``.
///
/// A view of the call's one record (its owner, `RunningCall`), which also keeps the call's life
/// (its stage, its deadline's handlers, what it holds: `CallLifecycle`) under the same lock. The
/// transport writes the phase and the figures through it and nothing else.
///
/// Thread-safe; every method is cheap and never throws. One recorder belongs to one call; copies
/// of it share the same figures.
public struct TransferRecorder: Sendable {
    /// The call whose record this writes.
    let call: RunningCall

    /// Creates a recorder for a call over the named transport, made outside a client (a test, a
    /// custom caller): its context has no deadline signal and no chain internals.
    /// - Parameter transport: The transport's name.
    public init(transport: String) {
        call = RunningCall.make(transport: transport, internals: .none, deadline: .none)
    }

    /// The recorder of `call`'s record (a shared transfer's writes its first caller's).
    @inline(__always)
    init(_ call: RunningCall) {
        self.call = call
    }

    /// The phase the call is in now.
    public var phase: NetworkError.Phase { call.withRecord { $0.lifecycle.phase } }

    /// Marks the call as being in `phase`.
    /// - Parameter phase: The phase now running.
    public func enter(_ phase: NetworkError.Phase) {
        call.withRecord { $0.lifecycle.enter(phase) }
    }

    /// Changes the metrics gathered so far.
    /// - Parameter change: Edits the metrics; runs under a lock, so keep it short. The call's
    ///   deadline shares that lock: the closure must not read the context's cancellation or
    ///   deadline, nor register a handler (the lock is not reentrant).
    public func update(_ change: (inout RequestMetrics) -> Void) {
        call.withRecord { change(&$0.metrics) }
    }

    /// Changes the metrics and marks the call as being in `phase`, under one lock.
    /// - Parameters:
    ///   - phase: The phase now running.
    ///   - change: Edits the metrics; runs under a lock, so keep it short (and away from the
    ///     context's deadline, see ``update(_:)``).
    public func update(entering phase: NetworkError.Phase, _ change: (inout RequestMetrics) -> Void) {
        call.withRecord { record in
            change(&record.metrics)
            record.lifecycle.enter(phase)
        }
    }

    /// Changes the metrics and returns a copy of them, under one lock.
    /// - Parameter change: Edits the metrics; runs under a lock, so keep it short (and away from
    ///   the context's deadline, see ``update(_:)``).
    /// - Returns: The metrics after the change.
    public func updated(_ change: (inout RequestMetrics) -> Void) -> RequestMetrics {
        call.withRecord { record in
            change(&record.metrics)
            return record.metrics
        }
    }

    /// A copy of the metrics gathered so far.
    public var metrics: RequestMetrics { call.withRecord { $0.metrics } }
}
