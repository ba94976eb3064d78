import Courier
import Foundation

/// The bytes of one response between libcurl (the producer, on the engine thread) and the task
/// reading the body (the consumer), with backpressure.
///
/// The pieces libcurl writes in one round of work go into one chunk while it has room (up to
/// ``chunkBytes``), and a waiting reader is woken once, when the round ends
/// (``Appended/wakeReader``): a 1 MiB body costs a few chunks and wakeups, not one per 16 KiB
/// piece. When more than `highWater` bytes wait, ``append(_:)`` refuses the piece and the engine
/// pauses the transfer (libcurl keeps the refused bytes and offers them again on resume). Once the
/// consumer has taken the buffer down to half of that, it asks the engine to resume.
///
/// For a caller that takes the body only whole (``CurlTransfer/gathersBody``) the buffer gathers:
/// the bytes go into one `Data`, sized for the announced body at once (up to
/// `ResponseBody.maxReservation`), and the reader gets it when the body ends. So a body reaches its
/// reader as one chunk, with one wakeup and one copy (out of libcurl's buffer). There is no high
/// water then: the caller holds the whole body in the end anyway, and the response size limit
/// bounds it (checked as the bytes arrive).
final class CurlBodyBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bytes = 0
        /// Room left in the last chunk while the reader has not taken it: the next piece goes
        /// into it without a new allocation.
        var tailRoom = 0
        var paused = false
        /// Set once: `nil` while the body is still arriving.
        var end: Result<Void, NetworkError>?
        var waiter: CheckedContinuation<Data?, any Error>?
        /// The engine will call ``wakeReader()`` at the end of its round.
        var wakeDue = false
        var consumerGone = false
        /// The transfer filling this buffer, for asking its engine to resume or stop it. Cleared
        /// by ``releaseTransfer()`` when the transfer leaves the multi handle, which breaks the
        /// transfer ↔ buffer cycle (a strong link, because a weak one costs a side-table
        /// allocation per call).
        var transfer: CurlTransfer?
        /// The body bytes still announced and not yet appended (0 when unknown or all arrived).
        var remaining: Int
    }

    private let state: Locked<State>
    private let highWater: Int
    /// Whether the buffer gathers the body for a caller that takes it only whole.
    private let gathers: Bool

    /// A streamed chunk holds up to this many bytes when libcurl writes full pieces (its own
    /// buffer is 16 KiB): the pieces of one round of libcurl work go to the reader together.
    static let chunkBytes = 64 * 1024
    /// A piece this large suggests more follows in the same round: libcurl hands the write
    /// callback at most `CURL_MAX_WRITE_SIZE` (16 KiB) at a time, whatever `CURLOPT_BUFFERSIZE`
    /// is (7.x splits larger reads, 8.x's client writer too), so a full piece means its read
    /// filled up.
    private static let fullPiece = 16 * 1024

    /// - Parameters:
    ///   - highWater: How many bytes may wait before the transfer is paused (not for a buffer
    ///     that gathers).
    ///   - transfer: The transfer that fills the buffer; held until ``releaseTransfer()``.
    ///   - first: Bytes that arrived before the buffer was made.
    ///   - paused: Whether the transfer is paused already (because `first` reached the high
    ///     water): the consumer's reading then resumes it.
    ///   - remaining: The body bytes still announced after `first` (0: unknown).
    ///   - gathers: Gather the whole body for a caller that takes it only whole.
    init(highWater: Int, transfer: CurlTransfer, first: Data = Data(), paused: Bool = false, remaining: Int = 0, gathers: Bool = false) {
        self.highWater = highWater
        self.gathers = gathers
        var initial = State(transfer: transfer, remaining: max(0, remaining))
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

    /// What ``append(_:)`` did with a piece.
    enum Appended: Equatable {
        /// Taken.
        case taken
        /// Taken, and the reader waits for bytes: the engine calls ``wakeReader()`` when its
        /// round of libcurl work ends, so that the round's pieces reach the reader as one chunk,
        /// with one wakeup.
        case wakeReader
        /// Refused (the buffer is full): the transfer must pause and offer the same bytes again
        /// later.
        case full
    }

    /// Offers a piece of the body. The bytes go into the last chunk while it has room and the
    /// reader has not taken it; a new chunk has room for what the round may still bring (up to
    /// ``chunkBytes``, or the whole announced body when gathering).
    func append(_ bytes: UnsafeRawBufferPointer) -> Appended {
        guard !bytes.isEmpty else { return .taken }
        return state.withLock { state in
            if state.consumerGone { return .taken }
            if !gathers, state.bytes >= highWater {
                state.paused = true
                return .full
            }
            if state.head < state.chunks.count,
                gathers || state.tailRoom >= bytes.count
                    || (bytes.count < Self.fullPiece && state.chunks[state.chunks.count - 1].count + bytes.count <= Self.chunkBytes)
            {
                // Into the last chunk: in place when it was sized ahead; grown for small pieces
                // (up to ``chunkBytes``: a server that sends tiny chunks gets no `Data` per piece)
                // and for a gathered body of unknown length.
                state.chunks[state.chunks.count - 1].append(contentsOf: bytes)
                state.tailRoom = max(0, state.tailRoom - bytes.count)
            } else {
                let room: Int
                if gathers {
                    room = min(ResponseBody.maxReservation, max(bytes.count, state.remaining))
                } else if bytes.count >= Self.fullPiece {
                    room = max(bytes.count, min(Self.chunkBytes, state.remaining > 0 ? state.remaining : Self.chunkBytes))
                } else {
                    room = bytes.count
                }
                var chunk = Data(capacity: room)
                chunk.append(contentsOf: bytes)
                state.chunks.append(chunk)
                state.tailRoom = room - bytes.count
            }
            state.bytes += bytes.count
            state.remaining = max(0, state.remaining - bytes.count)
            // A gathering reader waits for the end (``finish(_:)`` wakes it).
            guard !gathers, state.waiter != nil, !state.wakeDue else { return .taken }
            state.wakeDue = true
            return .wakeReader
        }
    }

    /// Hands the waiting reader what arrived (the engine calls it at the end of the round in which
    /// ``append(_:)`` answered ``Appended/wakeReader``).
    func wakeReader() {
        let (waiter, chunk, resumeNeeded): (CheckedContinuation<Data?, any Error>?, Data, Bool) = state.withLock { state in
            state.wakeDue = false
            guard let waiter = state.waiter, let taken = Self.takeChunk(&state, highWater: highWater) else { return (nil, Data(), false) }
            state.waiter = nil
            return (waiter, taken.chunk, taken.resume)
        }
        if resumeNeeded { resume() }
        waiter?.resume(returning: chunk)
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
        // A reader may wait while bytes wait for it (gathered, or due at the end of the engine's
        // round): it takes them first.
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
            if !gathers || state.end != nil, state.head < state.chunks.count {
                if waiter != nil { return .chunk(Data(), resume: false) }
                guard let taken = Self.takeChunk(&state, highWater: highWater) else { return .waiting }
                return .chunk(taken.chunk, resume: taken.resume)
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

    /// Takes the next chunk, and whether the transfer may resume now; `nil` when none waits.
    private static func takeChunk(_ state: inout State, highWater: Int) -> (chunk: Data, resume: Bool)? {
        guard state.head < state.chunks.count else { return nil }
        let chunk = state.chunks[state.head]
        // The reader holds the only reference: it may grow the chunk without a copy.
        state.chunks[state.head] = Data()
        state.head += 1
        state.bytes -= chunk.count
        if state.head == state.chunks.count { state.tailRoom = 0 }
        if state.head >= 64, state.head * 2 >= state.chunks.count {
            state.chunks.removeFirst(state.head)
            state.head = 0
        }
        let resume = state.paused && state.bytes <= highWater / 2
        if resume { state.paused = false }
        return (chunk, resume)
    }

    /// The consumer dropped the body without reading it to the end: stop the transfer.
    func consumerWentAway() {
        let transfer: CurlTransfer? = state.withLock { state in
            state.consumerGone = true
            state.chunks.removeAll()
            state.head = 0
            state.bytes = 0
            state.tailRoom = 0
            return state.end == nil ? state.transfer : nil
        }
        if let transfer { transfer.engine.stop(transfer, because: .cancelled(phase: .receiving)) }
    }
}
