import Courier
import Foundation

/// The bytes of one response between libcurl (the producer, on the engine thread) and the task
/// reading the body (the consumer), with backpressure.
///
/// When more than `highWater` bytes wait, ``append(_:)`` refuses the chunk and the engine pauses
/// the transfer (libcurl keeps the refused bytes and offers them again on resume). Once the
/// consumer has taken the buffer down to half of that, it asks the engine to resume.
///
/// For a caller that takes the body only whole (``CurlTransfer/gathersBody``) the buffer gathers:
/// the bytes go into one `Data`, sized for the announced body at once (up to
/// `ResponseBody.maxReservation`), and the reader gets it when the body ends. So a body reaches its reader
/// as one chunk, with one wakeup and one copy (out of libcurl's buffer), instead of a chunk, an
/// allocation and a wakeup per piece libcurl writes and a copy to join them. There is no high
/// water then: the caller holds the whole body in the end anyway, and the response size limit
/// bounds it (checked as the bytes arrive).
final class CurlBodyBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bytes = 0
        var paused = false
        /// Set once: `nil` while the body is still arriving.
        var end: Result<Void, NetworkError>?
        var waiter: CheckedContinuation<Data?, any Error>?
        var consumerGone = false
        /// The transfer filling this buffer, for asking its engine to resume or stop it. Cleared
        /// by ``releaseTransfer()`` when the transfer leaves the multi handle, which breaks the
        /// transfer ↔ buffer cycle (a strong link, because a weak one costs a side-table
        /// allocation per call).
        var transfer: CurlTransfer?
        /// Gathering: the bytes gathered so far (for sizing the next chunk).
        var gathered = 0
    }

    private let state: Locked<State>
    private let highWater: Int
    /// Gathering: the body bytes still announced and not yet gathered (0 when unknown); `nil`
    /// for a buffer that hands over each piece.
    private let gathering: Int?

    /// - Parameters:
    ///   - highWater: How many bytes may wait before the transfer is paused.
    ///   - transfer: The transfer that fills the buffer; held until ``releaseTransfer()``.
    ///   - first: Bytes that arrived before the buffer was made.
    ///   - paused: Whether the transfer is paused already (because `first` reached the high
    ///     water): the consumer's reading then resumes it.
    /// - Parameter gathering: Gather the bytes, with this many still announced (0: unknown);
    ///   `nil` to hand over each piece.
    init(highWater: Int, transfer: CurlTransfer, first: Data = Data(), paused: Bool = false, gathering: Int? = nil) {
        self.highWater = highWater
        self.gathering = gathering
        var initial = State(transfer: transfer)
        if !first.isEmpty {
            initial.chunks = [first]
            initial.bytes = first.count
        }
        initial.paused = paused
        state = Locked(initial)
    }

    /// Forgets the transfer: it left the multi handle, so there is nothing left to resume or stop.
    /// The engine calls it whenever it detaches a transfer.
    func releaseTransfer() {
        state.withLock { $0.transfer = nil }
    }

    /// Asks the engine to resume the paused transfer.
    private func resume() {
        guard let transfer = state.withLock({ $0.transfer }) else { return }
        transfer.engine.resume(transfer)
    }

    // MARK: Producer (engine thread)

    /// Offers a chunk. Returns `false` when the buffer is full: the caller must pause the transfer
    /// and offer the same bytes again later.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty else { return true }
        guard let gathering else { return append(Data(bytes)) }
        state.withLock { state in
            if state.consumerGone { return }
            if state.head < state.chunks.count {
                // The last chunk is not taken yet: gather into it (in place; it was sized ahead).
                state.chunks[state.chunks.count - 1].append(contentsOf: bytes)
            } else {
                let room = min(ResponseBody.maxReservation, max(bytes.count, gathering - state.gathered))
                var chunk = Data(capacity: room)
                chunk.append(contentsOf: bytes)
                state.chunks.append(chunk)
            }
            state.bytes += bytes.count
            state.gathered += bytes.count
        }
        // The reader waits for the end (``finish(_:)`` wakes it).
        return true
    }

    /// Hands over one piece: to the waiting reader at once, or queued.
    private func append(_ data: Data) -> Bool {
        guard !data.isEmpty else { return true }
        let (accepted, waiter): (Bool, CheckedContinuation<Data?, any Error>?) = state.withLock { state in
            if state.consumerGone { return (true, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            if state.bytes >= highWater {
                state.paused = true
                return (false, nil)
            }
            state.chunks.append(data)
            state.bytes += data.count
            return (true, nil)
        }
        waiter?.resume(returning: data)
        return accepted
    }

    /// Ends the body: successfully, or with an error the consumer will see after the buffered bytes.
    func finish(_ end: Result<Void, NetworkError>) {
        let (waiter, pending): (CheckedContinuation<Data?, any Error>?, Bool) = state.withLock { state in
            guard state.end == nil else { return (nil, false) }
            state.end = end
            let waiter = state.waiter
            state.waiter = nil
            return (waiter, state.head < state.chunks.count)
        }
        // A gathering buffer lets its reader wait while bytes gather: it takes them first.
        if pending {
            waiter?.resume(returning: Data())
            return
        }
        switch end {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

    /// Whether a reader waits for bytes (for tests).
    var readerWaits: Bool { state.withLock { $0.waiter != nil } }

    // MARK: Consumer (the reading task)

    /// The next chunk, `nil` at the end.
    /// - Throws: The transfer's error, or `CancellationError` when the reading task is cancelled.
    func next() async throws -> Data? {
        while true {
            switch takeOrWait(nil) {
            case .chunk(let chunk, let resumeNeeded):
                if resumeNeeded { resume() }
                return chunk
            case .end(.success):
                return nil
            case .end(.failure(let error)):
                throw error
            case .waiting:
                try Task.checkCancellation()
                // Resumed by the producer with a chunk, by `finish`, or with an empty chunk meaning "look again".
                let chunk = try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                        switch takeOrWait(continuation) {
                        case .waiting: break
                        case .chunk, .end: continuation.resume(returning: Data())
                        }
                    }
                } onCancel: {
                    let waiter = state.withLock { state in
                        defer { state.waiter = nil }
                        return state.waiter
                    }
                    waiter?.resume(throwing: CancellationError())
                }
                if let chunk, chunk.isEmpty { continue }
                return chunk
            }
        }
    }

    private enum Step {
        case chunk(Data, resume: Bool)
        case end(Result<Void, NetworkError>)
        case waiting
    }

    /// Takes the next chunk or the end if there is one, without consuming the end; otherwise
    /// installs `waiter` (when given) and reports `waiting`.
    private func takeOrWait(_ waiter: CheckedContinuation<Data?, any Error>?) -> Step {
        state.withLock { state in
            // A gathering buffer hands its bytes over only at the end.
            let ready = gathering == nil || state.end != nil
            if ready, state.head < state.chunks.count {
                if waiter != nil { return .chunk(Data(), resume: false) }
                let chunk = state.chunks[state.head]
                // The reader holds the only reference: it may grow the chunk without a copy.
                state.chunks[state.head] = Data()
                state.head += 1
                state.bytes -= chunk.count
                if state.head >= 64, state.head * 2 >= state.chunks.count {
                    state.chunks.removeFirst(state.head)
                    state.head = 0
                }
                let resume = state.paused && state.bytes <= highWater / 2
                if resume { state.paused = false }
                return .chunk(chunk, resume: resume)
            }
            if let end = state.end { return .end(end) }
            if let waiter {
                if Task.isCancelled {
                    // The cancellation handler already ran (or will find no waiter): do not park.
                    return .end(.failure(NetworkError.cancelled(phase: .receiving)))
                }
                state.waiter = waiter
            }
            return .waiting
        }
    }

    /// The consumer dropped the body without reading it to the end: stop the transfer.
    func consumerWentAway() {
        let transfer: CurlTransfer? = state.withLock { state in
            state.consumerGone = true
            state.chunks.removeAll()
            state.head = 0
            state.bytes = 0
            return state.end == nil ? state.transfer : nil
        }
        if let transfer { transfer.engine.stop(transfer, because: .cancelled(phase: .receiving)) }
    }
}
