/// The lifecycle of one API object, as a value-type state machine.
///
/// Each mutating method takes an event and returns the action the owner must run after it has
/// released its lock. The machine makes the guarantees of ``BaseAPI``: `start` works once,
/// `cancel` is idempotent in every state, and exactly one outcome is delivered.
///
/// ```
/// idle ──start──▶ running ──finish──▶ finished(succeeded|failed)
///   │                │
///   └────cancel──────┴──cancel──▶ finished(cancelled)
/// ```
/// `Handle` is what the owner cancels to stop the work (a `Task` in ``BaseAPI``); tests use plain values.
struct APILifecycle<Handle> {
    /// How a call ended.
    enum Outcome: Equatable {
        case succeeded, failed, cancelled
    }

    enum State {
        /// Created, not started. `start` → running; `cancel` → finished(cancelled).
        case idle
        /// Started; `handle` is nil until the owner attaches the work it launched.
        /// `finish` → finished(outcome); `cancel` → finished(cancelled).
        case running(handle: Handle?)
        /// Ended; every later event is refused or ignored.
        case finished(Outcome)
    }

    private(set) var state: State = .idle

    enum StartAction {
        /// Launch the work, then call ``attach(_:)`` with its handle.
        case launch
        /// Refuse: the object already started or finished.
        case rejectAlreadyStarted
        /// Refuse: the object was cancelled before it started.
        case rejectCancelled
    }

    mutating func start() -> StartAction {
        switch state {
        case .idle:
            state = .running(handle: nil)
            return .launch
        case .finished(.cancelled):
            return .rejectCancelled
        case .running, .finished:
            return .rejectAlreadyStarted
        }
    }

    enum AttachAction {
        case none
        /// A cancel arrived between launch and attach: cancel the handle now.
        case cancel(Handle)
    }

    mutating func attach(_ handle: Handle) -> AttachAction {
        switch state {
        case .running(handle: nil):
            state = .running(handle: handle)
            return .none
        case .finished(.cancelled):
            return .cancel(handle)
        case .idle, .running, .finished:
            return .none
        }
    }

    enum CancelAction {
        case none
        /// Report cancellation to the caller, and cancel the handle if there is one.
        case reportCancelled(cancelling: Handle?)
    }

    mutating func cancel() -> CancelAction {
        switch state {
        case .idle:
            state = .finished(.cancelled)
            return .reportCancelled(cancelling: nil)
        case .running(let handle):
            state = .finished(.cancelled)
            return .reportCancelled(cancelling: handle)
        case .finished:
            return .none
        }
    }

    enum FinishAction: Equatable {
        /// Deliver the result to the caller.
        case deliver
        /// Drop the result: cancellation was already reported.
        case drop
    }

    mutating func finish(succeeded: Bool) -> FinishAction {
        finish(succeeded ? .succeeded : .failed)
    }

    /// Ends a running call with `outcome` (``Outcome/cancelled`` when the work itself reported a
    /// cancellation, for example one made by ``RequestQueue/cancelAll(_:)``).
    mutating func finish(_ outcome: Outcome) -> FinishAction {
        switch state {
        case .running:
            state = .finished(outcome)
            return .deliver
        case .idle, .finished:
            return .drop
        }
    }
}
