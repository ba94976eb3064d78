import Foundation
import HTTPTypes

/// The point between application and network middleware where a queued call waits for its slot
/// (and, when it may, shares an identical call's transfer).
///
/// A link of every client's chain (see `LinkChain`); a call without a queue passes straight
/// through. A queued call holds its slot until the whole response body has been read, so the
/// queue's limits bound the transfers really running; the body then continues as bytes in memory.
/// Each redirect hop and each retry waits for a slot of its own.
struct QueueGate: Sendable {
    /// Whether network middleware run below: they may add per-caller credentials the sharing key
    /// cannot see, so automatic de-duplication is off (`LinkChain` sets it).
    let networkMiddlewareBelow: Bool

    /// Waits for a slot in `placement`'s queue (or joins an identical call's transfer), runs
    /// `next`, and reads the body before freeing the slot.
    func pass(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ placement: QueuePlacement,
        _ next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        let queue = placement.queue
        if context.streamsBody { return try await streamed(request, body, context, placement, next) }
        let automaticAllowed = !networkMiddlewareBelow
        guard let key = queue.sharingKey(for: request, placement.deduplication, context: context, automaticAllowed: automaticAllowed)
        else {
            let (head, data) = try await exchange(request, body, context, placement, next)
            return TransportResponse(head: head, body: ResponseBody(data: data))
        }
        // The transfer is everyone's: it runs until the last caller leaves (each at its own
        // deadline or cancellation), not until the first caller's deadline.
        // (Made by the first caller only: the others join.)
        let outcome = try await queue.share(key: key, onJoin: placement.onStart, context: context) { [context] in
            var shared = context
            shared.call = context.call.sharedTransfer()
            return try await exchange(request, body, shared, placement, next)
        }
        guard outcome.joined else { return TransportResponse(head: outcome.head, body: ResponseBody(data: outcome.body)) }
        context.recorder.update { $0.deduplicated = true }
        // The answer was another caller's: what it gave that caller alone (its cookies) stays with it.
        var head = outcome.head
        head.headerFields = CredentialScope.shareable(head.headerFields)
        return TransportResponse(head: head, body: ResponseBody(data: outcome.body))
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
        let started = try await takeSlot(host: host, context, placement)
        let response: TransportResponse
        do {
            response = try await next(request, body, context)
        } catch {
            Self.release(queue, host: host, heldSince: started, SlotEnding(error))
            throw error
        }
        let slot = SlotRelease { ending in Self.release(queue, host: host, heldSince: started, ending) }
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await slot.next(response.body) })
        return TransportResponse(head: response.head, body: ResponseBody(stream: stream, expectedLength: response.body.expectedLength))
    }

    /// Passes a streamed body on and frees its queue slot once, at the body's end, failure or
    /// release. `@unchecked Sendable`: one reader at a time (see ``ResponseBodySource``).
    final class SlotRelease: @unchecked Sendable {
        private var iterator: ResponseBody.AsyncIterator?
        private var release: (@Sendable (SlotEnding) -> Void)?

        init(_ release: @escaping @Sendable (SlotEnding) -> Void) { self.release = release }

        func next(_ body: ResponseBody) async throws -> Data? {
            if iterator == nil, release != nil { iterator = body.makeAsyncIterator() }
            do {
                guard let chunk = try await iterator?.next() else {
                    free(.measured(failed: false))
                    return nil
                }
                return chunk
            } catch {
                free(SlotEnding(error))
                throw error
            }
        }

        private func free(_ ending: SlotEnding) {
            iterator = nil
            release?(ending)
            release = nil
        }

        deinit { release?(.unmeasured) }
    }

    /// Waits for a slot, runs the rest of the chain and reads the body, then frees the slot.
    private func exchange(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ placement: QueuePlacement,
        _ next: Middleware.Next
    ) async throws -> (HTTPResponse, Data) {
        let queue = placement.queue
        let host = request.authority ?? ""
        let started = try await takeSlot(host: host, context, placement)
        var ending = SlotEnding.measured(failed: false)
        defer { Self.release(queue, host: host, heldSince: started, ending) }
        do {
            let response = try await next(request, body, context)
            let data = try await response.body.collect(upTo: context.maxResponseBytes)
            return (response.head, data)
        } catch {
            ending = SlotEnding(error)
            throw error
        }
    }

    /// Waits for a slot of `placement`'s queue for `host`, adds the wait to the call's queued time,
    /// enters `sending` and tells `onStart`. Returns when the slot was taken.
    @inline(__always)
    private func takeSlot(
        host: String, _ context: RequestContext, _ placement: QueuePlacement
    ) async throws -> ContinuousClock.Instant {
        let queue = placement.queue
        let recorder = context.recorder
        let waitStart = queue.timeSource.now
        recorder.enter(.queued)
        try await queue.acquireSlot(host: host, priority: placement.priority, context: context)
        let started = queue.timeSource.now
        let waited = waitStart.duration(to: started)
        recorder.update { $0.queued += waited }
        recorder.enter(.sending)
        placement.onStart?()
        return started
    }

    /// How a call that held a slot ended, for adaptive limits: measured (failed or not), or not
    /// counted (cancelled, or refused before any I/O).
    enum SlotEnding {
        case measured(failed: Bool)
        case unmeasured

        /// The ending of a call that threw `error`: a timeout or a lost connection is a failure the
        /// limit backs off from; cancellation and invalid requests say nothing about the host.
        init(_ error: any Error) {
            guard let error = error as? NetworkError else {
                self = error is CancellationError ? .unmeasured : .measured(failed: true)
                return
            }
            switch error.kind {
            case .timedOut, .connectionClosed, .connectFailure, .transportFailure: self = .measured(failed: true)
            case .cancelled, .invalidRequest, .circuitOpen, .shutDown, .queueFull: self = .unmeasured
            default: self = .measured(failed: false)
            }
        }
    }

    /// Frees the slot, with what adaptive limits and the estimate of ``RequestQueue/Limits/shedsLateCalls``
    /// learn from the call.
    static func release(_ queue: RequestQueue, host: String, heldSince start: ContinuousClock.Instant, _ ending: SlotEnding) {
        guard queue.limits.adaptive != nil || queue.limits.shedsLateCalls, case .measured(let failed) = ending else {
            queue.releaseSlot(host: host)
            return
        }
        let held = start.duration(to: queue.timeSource.now)
        queue.releaseSlot(host: host, heldNanoseconds: held.wholeNanoseconds, failed: failed)
    }
}
