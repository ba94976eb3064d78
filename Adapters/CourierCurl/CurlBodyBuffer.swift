import Courier
import Foundation

/// The bytes of one response between libcurl (the producer, on the engine thread) and the task
/// reading the body (the consumer), with backpressure.
///
/// When more than `highWater` bytes wait, ``append(_:)`` refuses the chunk and the engine pauses
/// the transfer (libcurl keeps the refused bytes and offers them again on resume). Once the
/// consumer has taken the buffer down to half of that, it asks the engine to resume.
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
    }

    private let state: Locked<State>
    private let highWater: Int

    /// - Parameters:
    ///   - highWater: How many bytes may wait before the transfer is paused.
    ///   - transfer: The transfer that fills the buffer; held until ``releaseTransfer()``.
    ///   - first: Bytes that arrived before the buffer was made.
    ///   - paused: Whether the transfer is paused already (because `first` reached the high
    ///     water): the consumer's reading then resumes it.
    init(highWater: Int, transfer: CurlTransfer, first: Data = Data(), paused: Bool = false) {
        self.highWater = highWater
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
    func append(_ data: Data) -> Bool {
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
        let waiter: CheckedContinuation<Data?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = end
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        switch end {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

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
            if state.head < state.chunks.count {
                if waiter != nil { return .chunk(Data(), resume: false) }
                let chunk = state.chunks[state.head]
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
