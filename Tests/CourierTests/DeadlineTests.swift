import Courier
import CourierMock
import CourierTestSupport
import Foundation
import Testing

@Suite("The deadline: one alarm on the call's clock ends every wait under the call")
struct DeadlineTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path: String
        var timeout: Duration?
    }

    /// Waits on its own, outside `next`, until the call is cancelled or its deadline passes.
    struct WaitsOnItsOwn: Middleware {
        let started: Locked<Bool>

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            let waiter = Locked<CheckedContinuation<Void, any Error>?>(nil)
            try await context.withCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let parked = waiter.withLock { slot -> Bool in
                        if context.isCancelled { return false }
                        slot = continuation
                        return true
                    }
                    if parked { started.withLock { $0 = true } } else { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                waiter.withLock { $0.take() }?.resume(throwing: CancellationError())
            }
            return try await next(request, body, context)
        }
    }

    static func client(_ mock: MockTransport, clock: ManualTimeSource, middleware: [any Middleware] = []) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        return try NetworkClient(configuration: configuration, transport: mock, middleware: middleware)
    }

    @Test("a timed-out call leaves its caller's task uncancelled, and its alarm is gone")
    func callerNotCancelled() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/slow", .text("late", delay: .seconds(60)))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        let mover = Task {
            await clock.waitForAlarms(2)  // the deadline and the mock's delay
            clock.advance(by: .seconds(5))
        }
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call(path: "slow", timeout: .seconds(5))) }
        #expect(error?.kind == .timedOut)
        #expect(error?.phase == .awaitingResponse)
        #expect(!Task.isCancelled, "the deadline ended the call's work, not the caller's task")
        await mover.value
        #expect(clock.pendingAlarms == 0)
    }

    @Test("a call that finishes first removes its alarm; the next call is not affected")
    func finishedCallRemovesItsAlarm() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/fast", .text("ok"))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        for _ in 0..<3 {
            _ = try await client.send(Call(path: "fast", timeout: .seconds(1)))
            #expect(clock.pendingAlarms == 0)
        }
        clock.advance(by: .seconds(10))
        #expect(String(decoding: try await client.send(Call(path: "fast")), as: UTF8.self) == "ok")
    }

    @Test("a middleware's own wait under withCancellationHandler ends at the deadline, as timed out")
    func middlewareWait() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("never reached"))
        let clock = ManualTimeSource()
        let started = Locked(false)
        let client = try Self.client(mock, clock: clock, middleware: [WaitsOnItsOwn(started: started)])
        let call = Task { try await client.send(Call(path: "x", timeout: .seconds(3))) }
        await clock.waitForAlarms(1)
        #expect(await eventually { started.withLock { $0 } })
        clock.advance(by: .seconds(3))
        let error = await #expect(throws: NetworkError.self) { try await call.value }
        #expect(error?.kind == .timedOut)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("cancelling the caller still ends the same wait, as cancelled")
    func middlewareWaitCancelled() async throws {
        let mock = MockTransport()
        let clock = ManualTimeSource()
        let started = Locked(false)
        let client = try Self.client(mock, clock: clock, middleware: [WaitsOnItsOwn(started: started)])
        let call = Task { try await client.send(Call(path: "x", timeout: .seconds(3))) }
        #expect(await eventually { started.withLock { $0 } })
        call.cancel()
        let error = await #expect(throws: NetworkError.self) { try await call.value }
        #expect(error?.kind == .cancelled)
    }

    /// Registers a deadline handler that holds `held` strongly, as a transport's handler holds its
    /// transfer.
    struct HoldsAHandler: Middleware {
        final class Held: Sendable {}
        let tracker: Locked<(weak: WeakBox, ran: Bool)>

        final class WeakBox: @unchecked Sendable {
            weak var value: Held?
        }

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            let held = Held()
            tracker.withLock { $0.weak.value = held }
            let tracker = tracker
            context.onDeadline {
                _ = held
                tracker.withLock { $0.ran = true }
            }
            return try await next(request, body, context)
        }
    }

    @Test("a deadline handler is dropped when its call ends: what it holds is released, and it never runs")
    func handlersDroppedAtTheEnd() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/fast", .text("ok"))
        let clock = ManualTimeSource()
        let tracker = Locked((weak: HoldsAHandler.WeakBox(), ran: false))
        let client = try Self.client(mock, clock: clock, middleware: [HoldsAHandler(tracker: tracker)])
        _ = try await client.send(Call(path: "fast", timeout: .seconds(5)))
        #expect(tracker.withLock { $0.weak.value == nil }, "the handler (and what it holds) outlived the call")
        clock.advance(by: .seconds(10))
        #expect(tracker.withLock { !$0.ran })
    }
}
