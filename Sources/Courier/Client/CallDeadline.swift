/// A call's deadline as a cancellation source: the client sets an alarm for it on the call's
/// clock, and when it rings, every wait under the call is ended through the handlers registered
/// here, the way Task cancellation ends them.
///
/// Transports and links reach it through ``RequestContext``:
/// ``RequestContext/withCancellationHandler(_:onCancel:)`` at a wait,
/// ``RequestContext/onDeadline(_:)`` for work that lives as long as a transfer, and
/// ``RequestContext/interruptible(_:)`` for a library that only Task cancellation can stop.
/// Handlers run once, outside the lock, on the thread that rings the alarm (or at once when the
/// deadline has already passed).
struct CallDeadline: Sendable {
    /// The call it belongs to: its ``CallLifecycle`` is kept in the call's record, under the
    /// record's lock. One reference, never optional: a closure that captures only a `CallDeadline`
    /// (the alarm that passes it) uses that reference as its context and allocates nothing.
    private let call: RunningCall

    /// A deadline that never passes (contexts made outside a client, shared transfers): one
    /// instance for the process, which stores nothing.
    static let never = CallDeadline(RunningCall.never)

    /// The deadline `call`'s waits watch (see ``RunningCall/deadline``): its own, its parent's, or
    /// none.
    init(_ call: RunningCall) {
        self.call = call
    }

    @inline(__always)
    private func withState<R>(_ body: (inout CallLifecycle) -> R) -> R {
        call.withLifecycle(body)
    }

    /// Whether the deadline has passed.
    var hasPassed: Bool { withState { $0.hasPassed } }

    /// Whether this is ``never``, which stores nothing and never ends.
    var isNever: Bool { call.hasNoDeadline }

    /// Whether the client's shutdown, not the deadline, ended the call.
    var passedByShutdown: Bool { withState { $0.passedByShutdown } }

    /// Marks the deadline as passed and runs every handler.
    /// - Parameter byShutdown: The client's graceful shutdown ends the call (see
    ///   ``NetworkClient/shutdown(gracePeriod:)``), not its deadline.
    func pass(byShutdown: Bool = false) {
        let handlers = withState { $0.pass(byShutdown: byShutdown) }
        for handler in handlers.all { handler.run() }
    }

    /// The deadline's alarm while the call holds one.
    var alarm: TimeSourceAlarm? { withState { $0.alarm } }

    /// Runs `handler` when the deadline passes, or at once when it has (never, for ``never``, nor
    /// once the call has ended).
    /// - Returns: A token for ``remove(_:)``; `nil` when nothing was stored.
    @discardableResult
    func register(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        switch withState({ $0.register(CallLifecycle.Handler(run: handler)) }) {
        case .kept(let id): return id
        case .runNow:
            handler()
            return nil
        case .dropped: return nil
        }
    }

    /// Removes a handler that has not run.
    func remove(_ id: UInt64?) {
        guard let id else { return }
        // Released outside the lock, as the call's end releases its handlers.
        let removed = withState { $0.remove(id) }
        _ = consume removed
    }
}

/// Runs work in a child task that the call's deadline cancels, for libraries that stop only on
/// Task cancellation.
///
/// The child's `UnsafeCurrentTask` may only be used while the child lives: it registers itself
/// before the work and unregisters, under the same lock, before it returns, and the deadline
/// cancels it only under that lock, so a finished task is never touched.
final class InterruptibleTask: Sendable {
    /// @unchecked Sendable: only used under the lock, while the task is alive.
    private struct RunningTask: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    private let running = Locked<RunningTask?>(nil)

    /// Runs `operation` in the current task (a child the caller made), cancelled when `deadline` passes.
    func run<T: Sendable>(_ operation: @Sendable () async throws -> T, deadline: CallDeadline) async throws -> T {
        withUnsafeCurrentTask { task in
            running.withLock { $0 = task.map(RunningTask.init) }
        }
        let token = deadline.register { [self] in
            running.withLock { $0?.task.cancel() }
        }
        defer {
            running.withLock { $0 = nil }
            deadline.remove(token)
        }
        return try await operation()
    }
}
