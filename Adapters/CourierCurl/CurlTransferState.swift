import Courier
import Foundation

/// The caller waiting for a transfer's response head. Resumed exactly once: the state holds it
/// until a transition hands it out in an action, and the engine resumes it from there.
typealias CurlHeadWaiter = UnsafeContinuation<TransportResponse, any Error>

/// The life of one curl transfer, and what exists in each phase of it: the caller's continuation,
/// the attempt on the multi handle (easy handle, header list, upload, counters), the head, the
/// early body bytes, the stream buffer. A transition that ends a phase hands its resources out in
/// the ``Action`` the engine performs, so a handle cannot outlive its attempt and a caller cannot be
/// answered twice.
///
/// The engine thread owns it. No libcurl call happens in a transition: `curl_easy_pause` and
/// `curl_multi_perform` run libcurl's callbacks, which change the state themselves. So every path
/// (a stop racing the completion included) is tested without a network
/// (`CurlTransferStateTests`).
enum CurlTransferState {
    /// Made by the caller, not yet taken by the engine.
    case created
    /// Stopped before the engine took it (a call cancelled at once): the error waits for the
    /// caller's continuation, which comes with the start.
    /// (`indirect`: a `NetworkError` is large, and every transition moves the whole state.)
    indirect case stoppedBeforeStart(NetworkError)
    /// On the multi handle; the final response head has not arrived.
    case awaitingHead(CurlAttempt, CurlHeadWaiter)
    /// The final head arrived and the caller does not have it yet. Body bytes that arrive
    /// meanwhile wait in `early`: a small response usually ends in the same round of libcurl work
    /// as its head, and is then handed over whole, without a ``CurlBodyBuffer``.
    case headReady(CurlAttempt, CurlHeadWaiter, HTTPResponse, early: Data)
    /// The caller has the head and reads the body from `buffer` as it arrives.
    case streaming(CurlAttempt, HTTPResponse, CurlBodyBuffer)
    /// One outcome was delivered and the attempt released. Terminal: later events do nothing.
    case finished
    /// Held while a transition runs: the state is moved out of its storage, changed, and written
    /// back (so that its payload is not copied). Never seen outside a transition.
    case modifying

    /// What the engine must do after a transition, with the resources the transition gave up.
    enum Action {
        /// Nothing.
        case none
        /// Make an attempt (a handle from the pool, configured) and put it on the multi handle;
        /// then ``attached(_:_:)``.
        case attach(CurlHeadWaiter)
        /// Release the attempt (when there is one), then fail the caller.
        /// (`indirect`, like ``endBody(_:_:release:)``: a `NetworkError` is large, and every
        /// transition returns an action.)
        indirect case failCaller(CurlHeadWaiter, NetworkError, release: CurlAttempt?)
        /// Release the attempt, then give the caller the head with the whole body.
        case deliverWhole(CurlHeadWaiter, HTTPResponse, Data, release: CurlAttempt)
        /// Give the caller the head with the body as a stream (the attempt goes on).
        case deliverStream(CurlHeadWaiter, HTTPResponse, CurlBodyBuffer, expectedLength: Int64?)
        /// Release the attempt, then end the body stream.
        indirect case endBody(CurlBodyBuffer, Result<Void, NetworkError>, release: CurlAttempt)
    }

    // Every transition moves the state out of its storage (``take()``), switches on that owned
    // value and moves the new state back. Switching on the stored value instead copies the whole
    // payload (a retain of every reference in it) at each callback: 44 retains per call, measured.

    /// Moves the state out, leaving ``modifying`` until a new state is written back.
    @inline(__always)
    private mutating func take() -> CurlTransferState {
        var taken = CurlTransferState.modifying
        swap(&self, &taken)
        return taken
    }

    /// The engine took the transfer, with the caller's continuation. `refusal` fails it at once
    /// (the engine is shutting down).
    mutating func start(_ waiter: CurlHeadWaiter, refusal: NetworkError?) -> Action {
        switch take() {
        case .created:
            if let refusal {
                self = .finished
                return .failCaller(waiter, refusal, release: nil)
            }
            self = .created
            return .attach(waiter)
        case .stoppedBeforeStart(let error):
            self = .finished
            return .failCaller(waiter, error, release: nil)
        case let other:
            // Started twice: impossible, but the caller must still hear once.
            self = other
            return .failCaller(waiter, Self.misuse("started twice"), release: nil)
        }
    }

    /// The attempt is configured and goes on the multi handle. Anything but ``Action/none`` means
    /// the state did not take it (the engine must not add it).
    mutating func attached(_ attempt: consuming CurlAttempt, _ waiter: CurlHeadWaiter) -> Action {
        switch take() {
        case .created:
            self = .awaitingHead(attempt, waiter)
            return .none
        case let other:
            self = other
            return .failCaller(waiter, Self.misuse("attached twice"), release: attempt)
        }
    }

    /// No attempt could be made (no handle, or an option libcurl refused).
    mutating func attachFailed(_ waiter: CurlHeadWaiter, _ error: NetworkError, release attempt: CurlAttempt?) -> Action {
        self = .finished
        return .failCaller(waiter, error, release: attempt)
    }

    /// The final head arrived (from the header callback). Returns whether the state took it: it
    /// is handed over at the end of the round (``flush(makeBuffer:)``) or with the whole body.
    mutating func headArrived(_ response: consuming HTTPResponse) -> Bool {
        switch take() {
        case .awaitingHead(let attempt, let waiter):
            self = .headReady(attempt, waiter, response, early: Data())
            return true
        case let other:
            self = other
            return false
        }
    }

    /// The engine finished a round of work: a head that is ready goes to the caller with a
    /// streamed body. `makeBuffer` gets the early bytes, whether libcurl holds more back, and the
    /// body's announced length.
    ///
    /// With `holdingWholeUpTo`, for a caller that takes the body only whole, a successful head
    /// (2xx: a redirect's or a refusal's body is not the caller's to wait for) whose body is
    /// announced at no more than that many bytes stays here instead (``CurlAttempt/holdsHead``): its
    /// bytes gather in `early`, and the caller gets the head with the whole body at the end (one
    /// wakeup, however many reads the body took). A held head that fails or is stopped is flushed
    /// first (without a limit), so the caller gets the head and then the body's failure, as from
    /// any transport.
    mutating func flush(
        holdingWholeUpTo limit: Int? = nil, makeBuffer: (_ early: Data, _ paused: Bool, _ announced: Int64?) -> CurlBodyBuffer
    ) -> Action {
        switch take() {
        case .headReady(var attempt, let waiter, let head, let early):
            // (The status as the parser read it: `HTTPResponse.status` parses its pseudo-field again.)
            if let limit, let announced = attempt.announcedLength, announced <= Int64(limit),
                (200..<300).contains(attempt.head.status ?? 0)
            {
                attempt.holdsHead = true
                self = .headReady(attempt, waiter, head, early: early)
                return .none
            }
            let buffer = makeBuffer(early, attempt.receivePaused, attempt.announcedLength)
            self = .streaming(attempt, head, buffer)
            return .deliverStream(waiter, head, buffer, expectedLength: attempt.announcedLength)
        case let other:
            self = other
            return .none
        }
    }

    /// libcurl reported the transfer done: successfully (`failure` is `nil`) or not.
    /// `handleFailed` says whether libcurl's handle may be reused.
    mutating func completed(_ failure: NetworkError?, handleFailed: Bool) -> Action {
        switch take() {
        case .awaitingHead(var attempt, let waiter):
            self = .finished
            attempt.handleFailed = handleFailed
            let error =
                failure
                ?? NetworkError(kind: .invalidResponse, phase: .awaitingResponse, message: "the transfer ended without a response head")
            return .failCaller(waiter, error, release: attempt)
        case .headReady(var attempt, let waiter, let head, let early):
            self = .finished
            attempt.handleFailed = handleFailed
            if let failure { return .failCaller(waiter, failure, release: attempt) }
            return .deliverWhole(waiter, head, early, release: attempt)
        case .streaming(var attempt, _, let buffer):
            self = .finished
            attempt.handleFailed = handleFailed
            return .endBody(buffer, failure.map { .failure($0) } ?? .success(()), release: attempt)
        case let other:
            self = other
            return .none
        }
    }

    /// The transfer must stop now: the caller cancelled, the body was dropped, the deadline or
    /// the stall limit passed, or the engine is shutting down. A handle taken off mid-transfer is
    /// not reused (like one libcurl failed: libcurl may keep some of its state on the handle).
    mutating func stop(_ error: NetworkError) -> Action {
        switch take() {
        case .created:
            self = .stoppedBeforeStart(error)
            return .none
        case .awaitingHead(var attempt, let waiter), .headReady(var attempt, let waiter, _, _):
            self = .finished
            attempt.handleFailed = true
            return .failCaller(waiter, error, release: attempt)
        case .streaming(var attempt, _, let buffer):
            self = .finished
            attempt.handleFailed = true
            return .endBody(buffer, .failure(error), release: attempt)
        case let other:
            self = other
            return .none
        }
    }

    /// Takes the attempt back to send the request again from the start, while the caller has
    /// nothing (a head not handed over yet is dropped with it). The state is ``created`` again:
    /// the engine releases the old attempt and attaches a new one with the same continuation.
    mutating func takeForResend() -> (CurlAttempt, CurlHeadWaiter)? {
        switch take() {
        case .awaitingHead(let attempt, let waiter), .headReady(let attempt, let waiter, _, _):
            self = .created
            return (attempt, waiter)
        case let other:
            self = other
            return nil
        }
    }

    /// Where the transfer is, without what it holds there.
    enum Phase: Equatable {
        case created, stoppedBeforeStart, awaitingHead, headReady, streaming, finished
        /// A transition is running (or one left the state half-way, which is a bug).
        case modifying
    }

    /// The case the state is in (moved out and back: reading it in place copies its payload).
    var phase: Phase {
        mutating get {
            let state = take()
            let phase: Phase
            switch state {
            case .created: phase = .created
            case .stoppedBeforeStart: phase = .stoppedBeforeStart
            case .awaitingHead: phase = .awaitingHead
            case .headReady: phase = .headReady
            case .streaming: phase = .streaming
            case .finished: phase = .finished
            case .modifying: phase = .modifying
            }
            self = state
            return phase
        }
    }

    /// Whether the caller has been given nothing yet: no head, no body, no error.
    var callerHasNothing: Bool {
        mutating get {
            switch phase {
            case .awaitingHead, .headReady: true
            default: false
            }
        }
    }

    /// Whether the final head arrived (header lines after it are trailers).
    var hasFinalHead: Bool {
        mutating get {
            switch phase {
            case .headReady, .streaming: true
            default: false
            }
        }
    }

    /// The final head, once it arrived.
    var finalHead: HTTPResponse? {
        mutating get {
            let state = take()
            let head: HTTPResponse?
            switch state {
            case .headReady(_, _, let ready, _), .streaming(_, let ready, _): head = ready
            default: head = nil
            }
            self = state
            return head
        }
    }

    /// The attempt's easy handle, while there is one.
    var easy: UnsafeMutableRawPointer? {
        mutating get { withAttempt { $0.easy } }
    }

    /// Runs `body` on the attempt in place, or returns `nil` when there is none.
    mutating func withAttempt<Result>(_ body: (inout CurlAttempt) -> Result) -> Result? {
        switch take() {
        case .awaitingHead(var attempt, let waiter):
            defer { self = .awaitingHead(attempt, waiter) }
            return body(&attempt)
        case .headReady(var attempt, let waiter, let head, let early):
            defer { self = .headReady(attempt, waiter, head, early: early) }
            return body(&attempt)
        case .streaming(var attempt, let head, let buffer):
            defer { self = .streaming(attempt, head, buffer) }
            return body(&attempt)
        case let other:
            self = other
            return nil
        }
    }

    /// A response header line arrived (from the header callback): a line of the head before the
    /// final head, a trailer after it. `nil` when there is no attempt.
    mutating func readHeaderLine(_ line: UnsafeRawBufferPointer) -> CurlResponseHead.Line? {
        switch take() {
        case .awaitingHead(var attempt, let waiter):
            defer { self = .awaitingHead(attempt, waiter) }
            attempt.activity &+= 1
            return attempt.head.take(bytes: line)
        case .headReady(var attempt, let waiter, let head, let early):
            defer { self = .headReady(attempt, waiter, head, early: early) }
            return attempt.takeTrailer(line)
        case .streaming(var attempt, let head, let buffer):
            defer { self = .streaming(attempt, head, buffer) }
            return attempt.takeTrailer(line)
        case let other:
            self = other
            return nil
        }
    }

    /// What response body bytes do in this state.
    enum BodyStep: Equatable {
        /// Taken.
        case taken
        /// Taken, and the body's reader waits: wake it when the round of libcurl work ends
        /// (``CurlBodyBuffer/wakeReader()``).
        case wake(CurlBodyBuffer)
        /// Refused: libcurl must hold them (`CURL_WRITEFUNC_PAUSE`) until the consumer catches up.
        case pause
        /// Over the response size limit: abort.
        case tooLarge

        /// The same step (for tests), a buffer by identity.
        static func == (lhs: BodyStep, rhs: BodyStep) -> Bool {
            switch (lhs, rhs) {
            case (.taken, .taken), (.pause, .pause), (.tooLarge, .tooLarge): true
            case (.wake(let left), .wake(let right)): left === right
            default: false
            }
        }
    }

    /// Response body bytes arrived (from the write callback). Before the final head (and for a
    /// `HEAD` request) they are not the response's body, and are dropped.
    /// - Parameters:
    ///   - earlyLimit: How many bytes may wait in `early` before the transfer pauses.
    ///   - maxBytes: The response size limit.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, earlyLimit: Int, maxBytes: Int) -> BodyStep {
        switch take() {
        case .headReady(var attempt, let waiter, let head, var early):
            defer { self = .headReady(attempt, waiter, head, early: early) }
            guard attempt.receivedBytes + bytes.count <= maxBytes else { return .tooLarge }
            guard early.count < earlyLimit else {
                attempt.receivePaused = true
                return .pause
            }
            if early.isEmpty {
                // Room for the announced body at once (up to the early limit and
                // `ResponseBody.maxReservation`): no regrowth, no copy of what came before.
                let announced = attempt.announcedLength.map { Int(clamping: $0) } ?? 0
                early = Data(capacity: max(bytes.count, min(announced, earlyLimit, ResponseBody.maxReservation)))
            }
            early.append(contentsOf: bytes)
            attempt.receivedBytes += bytes.count
            attempt.activity &+= 1
            return .taken
        case .streaming(var attempt, let head, let buffer):
            defer { self = .streaming(attempt, head, buffer) }
            guard attempt.receivedBytes + bytes.count <= maxBytes else { return .tooLarge }
            let appended = buffer.append(bytes)
            guard appended != .full else {
                attempt.receivePaused = true
                return .pause
            }
            attempt.receivedBytes += bytes.count
            attempt.activity &+= 1
            return appended == .wakeReader ? .wake(buffer) : .taken
        case let other:
            self = other
            return .taken
        }
    }

    private static func misuse(_ what: String) -> NetworkError {
        NetworkError(kind: .transportFailure, phase: .transfer, message: "curl: a transfer was \(what) (a bug in Courier)")
    }
}
