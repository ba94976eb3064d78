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
    struct Handler {
        var run: @Sendable () -> Void
    }

    /// The deadline's state, kept in its call's ``TransferRecorder`` record, under the recorder's
    /// lock: one allocation for both.
    struct State {
        /// Set only on ``never``: nothing is stored and it never passes.
        var isNever = false
        var passed = false
        /// Set when the call has ended: handlers are dropped and new ones neither kept nor run.
        var finished = false
        /// Set when the client's graceful shutdown ended the call (its grace period ran out).
        var byShutdown = false
        var nextID: UInt64 = 0
        var handlers = Handlers()
    }

    /// The registered handlers by token. A call has one or two at a time (the transfer's, a
    /// wait's), held inline; more go to a dictionary, so a call allocates nothing for them.
    struct Handlers {
        private var first: (id: UInt64, handler: Handler)?
        private var second: (id: UInt64, handler: Handler)?
        /// (A struct per handler: a bare closure in a dictionary is re-abstracted, an allocation.)
        private var more: [UInt64: Handler] = [:]

        mutating func insert(_ handler: Handler, id: UInt64) {
            if first == nil {
                first = (id, handler)
            } else if second == nil {
                second = (id, handler)
            } else {
                more[id] = handler
            }
        }

        /// Removes the handler with token `id` and returns it (to be released outside the lock).
        mutating func remove(_ id: UInt64) -> Handler? {
            if let slot = first, slot.id == id {
                first = nil
                return slot.handler
            }
            if let slot = second, slot.id == id {
                second = nil
                return slot.handler
            }
            return more.removeValue(forKey: id)
        }

        /// Moves every handler out, leaving none (a move: no retain of each closure).
        mutating func takeAll() -> Handlers {
            var taken = Handlers()
            swap(&taken, &self)
            return taken
        }

        /// Every handler, in no particular order.
        var all: [Handler] {
            [first?.handler, second?.handler].compactMap { $0 } + more.values
        }
    }

    /// The record it lives in. One reference, never optional: a closure that captures only a
    /// `CallDeadline` (the alarm that passes it) uses that reference as its context and allocates
    /// nothing.
    private let record: TransferRecorder

    /// A deadline that never passes (contexts made outside a client, shared transfers): one
    /// instance for the process, which stores nothing.
    static let never = CallDeadline(record: TransferRecorder(transport: "", deadline: State(isNever: true)))

    private init(record: TransferRecorder) {
        self.record = record
    }

    /// The deadline of the call `recorder` records, which the client passes when its alarm
    /// rings. It lives in the recorder's record (one allocation, one lock); give each call's
    /// recorder one deadline.
    init(recordedBy recorder: TransferRecorder) {
        record = recorder
    }

    private func withState<R>(_ body: (inout State) -> R) -> R {
        record.withDeadline(body)
    }

    /// Whether the deadline has passed.
    var hasPassed: Bool { withState { $0.passed } }

    /// Whether the client's shutdown, not the deadline, ended the call.
    var passedByShutdown: Bool { withState { $0.passed && $0.byShutdown } }

    /// Marks the deadline as passed and runs every handler.
    /// - Parameter byShutdown: The client's graceful shutdown ends the call (see
    ///   ``NetworkClient/shutdown(gracePeriod:)``), not its deadline.
    func pass(byShutdown: Bool = false) {
        let handlers = withState { state -> [@Sendable () -> Void] in
            guard !state.passed, !state.isNever else { return [] }
            state.passed = true
            state.byShutdown = byShutdown
            return state.handlers.takeAll().all.map(\.run)
        }
        for handler in handlers { handler() }
    }

    /// The call has ended: drops every handler (and so whatever they hold), and keeps none that
    /// come later. A handler may therefore hold the transfer that holds the call's context: the
    /// cycle ends here, with no weak reference (a weak reference gives the object a side table,
    /// and every later retain and release of it takes the slow path).
    func finish() {
        let dropped = withState { state -> Handlers in
            guard !state.isNever else { return Handlers() }
            state.finished = true
            return state.handlers.takeAll()
        }
        // Released outside the lock: a handler's captures may run deinitializers.
        _ = consume dropped
    }

    /// Runs `handler` when the deadline passes, or at once when it has (never, for ``never``, nor
    /// once the call has finished).
    /// - Returns: A token for ``remove(_:)``; `nil` when nothing was stored.
    @discardableResult
    func register(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let id = withState { state -> UInt64?? in
            guard !state.isNever, !state.finished else { return .some(nil) }
            guard !state.passed else { return nil }
            state.nextID &+= 1
            state.handlers.insert(Handler(run: handler), id: state.nextID)
            return state.nextID
        }
        guard let id else {
            handler()
            return nil
        }
        return id
    }

    /// Removes a handler that has not run.
    func remove(_ id: UInt64?) {
        guard let id else { return }
        // Released outside the lock, like `finish()`'s.
        let removed = withState { $0.handlers.remove(id) }
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
