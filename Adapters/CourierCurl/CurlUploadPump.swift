import Courier
import Foundation

/// Moves a streamed request body (an async producer) to libcurl's read callback (synchronous, on
/// the engine thread), with backpressure both ways.
///
/// A task of its own reads the producer and keeps at most `highWater` bytes ahead of libcurl: when
/// the buffer is full it waits until libcurl has taken it down to half. When libcurl asks for bytes
/// and none wait, the read callback pauses the transfer (`CURL_READFUNC_PAUSE`), and the next chunk
/// asks the engine to resume it. The engine stops the pump when the transfer leaves the multi
/// handle, which cancels the producer's task.
final class CurlUploadPump: Sendable {
    /// What the read callback gets.
    enum Take {
        /// Bytes to send.
        case bytes(Data)
        /// Nothing yet: pause the transfer; the pump resumes it when a chunk arrives.
        case wait
        /// The body is complete.
        case end
        /// The producer failed.
        case failed(NetworkError)
    }

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bytes = 0
        var end: Result<Void, NetworkError>?
        /// Whether the read callback paused the transfer for want of bytes.
        var transferWaiting = false
        /// The producer's task, waiting for room.
        var roomWaiter: CheckedContinuation<Void, Never>?
        var stopped = false
        var task: Task<Void, Never>?
        /// The transfer to resume, until the pump stops (a strong link, cut by ``stop()``).
        var transfer: CurlTransfer?
    }

    private let state: Locked<State>
    private let highWater: Int

    /// Starts reading `chunks` at once.
    /// - Parameters:
    ///   - chunks: The producer's chunks (see ``RequestBody/chunks(chunkSize:)``).
    ///   - highWater: How many bytes may wait for libcurl before the producer is held.
    ///   - transfer: The transfer to resume when a chunk arrives while it waits.
    init(chunks: AsyncThrowingStream<Data, any Error>, highWater: Int, transfer: CurlTransfer) {
        self.highWater = max(1, highWater)
        state = Locked(State(transfer: transfer))
        let task = Task { [self] in await self.run(chunks) }
        state.withLock { $0.task = task }
    }

    private func run(_ chunks: AsyncThrowingStream<Data, any Error>) async {
        do {
            for try await chunk in chunks where !chunk.isEmpty {
                let full = offer(chunk)
                if full { await waitForRoom() }
                if state.withLock({ $0.stopped }) { return }
            }
            finish(.success(()))
        } catch {
            finish(.failure(NetworkError.converting(error, phase: .sending)))
        }
    }

    /// Adds a chunk; resumes a waiting transfer. Returns whether the buffer is now full.
    private func offer(_ chunk: Data) -> Bool {
        let (resume, full): (CurlTransfer?, Bool) = state.withLock { state in
            guard !state.stopped else { return (nil, false) }
            state.chunks.append(chunk)
            state.bytes += chunk.count
            let resume = state.transferWaiting ? state.transfer : nil
            state.transferWaiting = false
            return (resume, state.bytes >= highWater)
        }
        if let resume { resume.engine.resumeUpload(resume) }
        return full
    }

    private func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.stopped || state.bytes < highWater { return true }
                state.roomWaiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func finish(_ end: Result<Void, NetworkError>) {
        let resume: CurlTransfer? = state.withLock { state in
            guard !state.stopped, state.end == nil else { return nil }
            state.end = end
            let resume = state.transferWaiting ? state.transfer : nil
            state.transferWaiting = false
            return resume
        }
        if let resume { resume.engine.resumeUpload(resume) }
    }

    // MARK: Consumer (engine thread, in the read callback)

    /// Up to `limit` bytes, or why there are none.
    func take(upTo limit: Int) -> Take {
        let (take, room): (Take, CheckedContinuation<Void, Never>?) = state.withLock { state in
            guard state.head < state.chunks.count else {
                switch state.end {
                case .success: return (.end, nil)
                case .failure(let error): return (.failed(error), nil)
                case nil:
                    state.transferWaiting = true
                    return (.wait, nil)
                }
            }
            var chunk = state.chunks[state.head]
            if chunk.count > limit {
                state.chunks[state.head] = chunk.dropFirst(limit)
                chunk = chunk.prefix(limit)
            } else {
                state.chunks[state.head] = Data()
                state.head += 1
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                }
            }
            state.bytes -= chunk.count
            var room: CheckedContinuation<Void, Never>?
            if state.bytes <= highWater / 2 {
                room = state.roomWaiter
                state.roomWaiter = nil
            }
            return (.bytes(chunk), room)
        }
        room?.resume()
        return take
    }

    /// Stops reading the producer and forgets the transfer. Safe to call more than once.
    func stop() {
        let (task, room): (Task<Void, Never>?, CheckedContinuation<Void, Never>?) = state.withLock { state in
            guard !state.stopped else { return (nil, nil) }
            state.stopped = true
            state.transfer = nil
            state.chunks = []
            state.bytes = 0
            defer { state.roomWaiter = nil }
            return (state.task, state.roomWaiter)
        }
        room?.resume()
        task?.cancel()
    }
}
