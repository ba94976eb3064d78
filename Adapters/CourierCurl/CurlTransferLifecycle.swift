import Courier

/// The life of one curl transfer, as a value: every event returns what the engine must do.
///
/// The engine thread owns it; no I/O happens here, so every path (cancel racing completion
/// included) is tested directly. Exactly one outcome reaches the caller: either the head (then
/// the body ends once) or one error.
struct CurlTransferLifecycle {
    /// Where a transfer is.
    enum State: Equatable {
        /// Handed to the engine, not yet on the multi handle. Goes to `running`, or `finished` if cancelled first.
        case waiting
        /// On the multi handle; the final response head has not arrived. Goes to `headReady` or `finished`.
        case running
        /// The final head arrived; the caller has not been given it yet. Goes to `streaming` or `finished`.
        case headReady
        /// The caller has the head and reads the body as it arrives. Goes to `finished`.
        case streaming
        /// One outcome was delivered. Terminal: every later event does nothing.
        case finished
    }

    /// What the engine must do after an event.
    enum Action {
        /// Nothing.
        case none
        /// Add the handle to the multi handle.
        case add
        /// Give the caller the head with the whole body, already received.
        case deliverBuffered
        /// Give the caller the head with a streamed body.
        case deliverStream
        /// Fail the caller waiting for the head (remove the handle first if `remove`).
        case failCaller(NetworkError, remove: Bool)
        /// End the body stream successfully.
        case finishBody
        /// End the body stream with an error (remove the handle first if `remove`).
        case failBody(NetworkError, remove: Bool)
    }

    private(set) var state = State.waiting
    /// Why the transfer was stopped while still `waiting`: reported when the engine takes it from
    /// its inbox. (A stop can overtake the start, for a call cancelled at once; the caller may still
    /// be installing its continuation then, so the outcome must wait for the start.)
    private var stoppedBeforeStart: NetworkError?

    /// The engine took the transfer from its inbox.
    mutating func start() -> Action {
        if let error = stoppedBeforeStart {
            stoppedBeforeStart = nil
            return .failCaller(error, remove: false)
        }
        guard state == .waiting else { return .none }
        state = .running
        return .add
    }

    /// The final response head was read.
    mutating func headCompleted() {
        if state == .running { state = .headReady }
    }

    /// The engine finished a round of work: hand over a head that is ready, as a stream.
    mutating func flush() -> Action {
        guard state == .headReady else { return .none }
        state = .streaming
        return .deliverStream
    }

    /// libcurl reported the transfer done, successfully or not.
    mutating func completed(_ failure: NetworkError?) -> Action {
        let previous = state
        state = .finished
        switch (previous, failure) {
        case (.waiting, _), (.finished, _):
            state = previous
            return .none
        case (.running, let failure?):
            return .failCaller(failure, remove: false)
        case (.running, nil):
            return .failCaller(
                NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: "the transfer ended without a response head"),
                remove: false)
        case (.headReady, let failure?):
            return .failCaller(failure, remove: false)
        case (.headReady, nil):
            return .deliverBuffered
        case (.streaming, let failure?):
            return .failBody(failure, remove: false)
        case (.streaming, nil):
            return .finishBody
        }
    }

    /// Whether the caller has been given nothing yet: no head, no body, no error.
    var callerHasNothing: Bool { state == .running || state == .headReady }

    /// The request is sent again from the start (the caller had nothing yet): a head that was
    /// ready is forgotten, and the next one is awaited.
    mutating func restart() {
        if state == .headReady { state = .running }
    }

    /// The transfer must stop now (the caller cancelled, the body was dropped, or the engine is
    /// shutting down).
    mutating func stop(_ error: NetworkError) -> Action {
        let previous = state
        state = .finished
        switch previous {
        case .waiting:
            stoppedBeforeStart = error
            return .none
        case .running, .headReady: return .failCaller(error, remove: true)
        case .streaming: return .failBody(error, remove: true)
        case .finished: return .none
        }
    }
}
