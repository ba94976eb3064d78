import Foundation
import HTTPTypes

/// The point between application and network middleware where a queued call waits for its slot
/// (and, when it may, shares an identical call's transfer).
///
/// A link of every client's chain (see `CallChain`); a call without a queue passes straight
/// through. A queued call holds its slot until the whole response body has been read, so the
/// queue's limits bound the transfers really running; the body then continues as bytes in memory.
/// Each redirect hop and each retry waits for a slot of its own.
struct QueueGate: BindableLink {
    func bound(to next: @escaping Middleware.Next) -> Middleware.Next {
        { request, body, context in
            guard let placement = context.placement else { return try await next(request, body, context) }
            return try await pass(request, body, context, placement, next)
        }
    }

    /// Waits for a slot in `placement`'s queue (or joins an identical call's transfer), runs
    /// `next`, and reads the body before freeing the slot.
    func pass(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ placement: QueuePlacement,
        _ next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        let queue = placement.queue
        if context.streamsBody { return try await streamed(request, body, context, placement, next) }
        guard let key = queue.sharingKey(for: request, placement.deduplication) else {
            let (head, data) = try await exchange(request, body, context, placement, next)
            return TransportResponse(head: head, body: ResponseBody(data: data))
        }
        // The transfer is everyone's: it runs until the last caller leaves (each at its own
        // deadline or cancellation), not until the first caller's deadline.
        var shared = context
        shared.deadlineSignal = .never
        let outcome = try await queue.share(key: key, onJoin: placement.onStart, context: context) { [shared] in
            try await exchange(request, body, shared, placement, next)
        }
        if outcome.joined {
            context.recorder.update { $0.deduplicated = true }
        }
        return TransportResponse(head: outcome.head, body: ResponseBody(data: outcome.body))
    }

    /// A streamed call: waits for a slot, runs the rest of the chain, and hands the body on; the
    /// slot is freed when the body ends or is dropped, so the queue's limits still bound the
    /// transfers really running.
    private func streamed(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ placement: QueuePlacement,
        _ next: Middleware.Next
    ) async throws -> TransportResponse {
        let queue = placement.queue
        let host = request.authority ?? ""
        let recorder = context.recorder
        let waitStart = queue.timeSource.now
        recorder.enter(.queued)
        try await queue.acquireSlot(host: host, priority: placement.priority, context: context)
        let response: TransportResponse
        do {
            recorder.update { $0.queued += waitStart.duration(to: queue.timeSource.now) }
            recorder.enter(.sending)
            placement.onStart?()
            response = try await next(request, body, context)
        } catch {
            queue.releaseSlot(host: host)
            throw error
        }
        let slot = SlotRelease { queue.releaseSlot(host: host) }
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await slot.next(response.body) })
        return TransportResponse(head: response.head, body: ResponseBody(stream: stream, expectedLength: response.body.expectedLength))
    }

    /// Passes a streamed body on and frees its queue slot once, at the body's end, failure or
    /// release. `@unchecked Sendable`: one reader at a time (see ``ResponseBodySource``).
    final class SlotRelease: @unchecked Sendable {
        private var iterator: ResponseBody.AsyncIterator?
        private var release: (@Sendable () -> Void)?

        init(_ release: @escaping @Sendable () -> Void) { self.release = release }

        func next(_ body: ResponseBody) async throws -> Data? {
            if iterator == nil, release != nil { iterator = body.makeAsyncIterator() }
            do {
                guard let chunk = try await iterator?.next() else {
                    free()
                    return nil
                }
                return chunk
            } catch {
                free()
                throw error
            }
        }

        private func free() {
            iterator = nil
            release?()
            release = nil
        }

        deinit { release?() }
    }

    /// Waits for a slot, runs the rest of the chain and reads the body, then frees the slot.
    private func exchange(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ placement: QueuePlacement,
        _ next: Middleware.Next
    ) async throws -> (HTTPResponse, Data) {
        let queue = placement.queue
        let host = request.authority ?? ""
        let recorder = context.recorder
        let waitStart = queue.timeSource.now
        recorder.enter(.queued)
        try await queue.acquireSlot(host: host, priority: placement.priority, context: context)
        defer { queue.releaseSlot(host: host) }
        let waited = waitStart.duration(to: queue.timeSource.now)
        recorder.update { $0.queued += waited }
        recorder.enter(.sending)
        placement.onStart?()
        let response = try await next(request, body, context)
        let data = try await response.body.collect(upTo: context.maxResponseBytes)
        return (response.head, data)
    }
}
