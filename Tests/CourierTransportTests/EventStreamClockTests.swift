import Courier
import CourierConformance
import CourierMock
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// An event stream waits for its reconnection on the client's clock, so a test advances the
/// clock instead of sleeping.
@Suite("Event streams reconnect on the client's clock")
struct EventStreamClockTests {
    /// A client on a manual clock whose mock answers `/feed` with `responses`, in turn.
    static func feed(
        _ responses: [MockResponse], observers: [any CallObserver] = []
    ) throws -> (NetworkClient, MockTransport, ManualTimeSource) {
        let clock = ManualTimeSource()
        let mock = MockTransport()
        mock.stub(.get, "/feed", responses: responses)
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        return (try NetworkClient(configuration: configuration, transport: mock, observers: observers), mock, clock)
    }

    /// Whether a graceful shutdown of `client` returns before its 30 s grace period passes on
    /// `clock` (it does when no call is left running); the clock is moved past it afterwards.
    static func shutsDownAtOnce(_ client: NetworkClient, _ clock: ManualTimeSource) async -> Bool {
        let done = Mutex(false)
        let shutdown = Task {
            await client.shutdown(gracePeriod: .seconds(30))
            done.withLock { $0 = true }
        }
        let atOnce = await eventually(timeout: .seconds(10)) { done.withLock { $0 } }
        clock.advance(by: .seconds(30))
        await shutdown.value
        return atOnce
    }

    @Test("the server's retry holds the next connection until the clock has moved that far")
    func waitsOnTheClock() async throws {
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("retry: 5000\nid: 1\ndata: first\n\n".utf8))
        let (client, mock, clock) = try Self.feed([stream, .status(204)])
        var events = client.events(RawEndpoint(path: "feed")).makeAsyncIterator()
        #expect(try await events.next()?.data == "first")
        let rest = Task {
            var iterator = events
            return try await iterator.next()
        }
        // The first connection ended: the second waits for 5 s of the manual clock.
        #expect(await eventually { clock.pendingAlarms > 0 }, "no wait was scheduled")
        #expect(mock.recordedRequests.count == 1)
        clock.advance(by: .seconds(4))
        #expect(mock.recordedRequests.count == 1 && clock.pendingAlarms > 0, "reconnected before the server's retry")
        clock.advance(by: .seconds(1))
        let last = try await rest.value
        #expect(last == nil)
        #expect(mock.recordedRequests.count == 2)
        #expect(mock.recordedRequests.last?.head.headerFields[.init("Last-Event-ID")!] == "1")
        #expect(mock.recordedRequests.first?.head.headerFields[.accept] == "text/event-stream")
        await client.shutdown()
    }

    @Test("a server that sends half a line and drops the connection gets doubling waits and an end, not a reconnect loop")
    func halfLinesBackOff() async throws {
        let half = MockResponse.status(200, headers: ["Content-Type": "text/event-stream"], body: Data(": hi\nretry: 1000\ndata: ha".utf8))
        let (client, mock, clock) = try Self.feed(Array(repeating: half, count: 10))
        var reconnection = EventStreamReconnection()
        reconnection.maxAttempts = 3
        let reading = Task {
            var iterator = client.events(RawEndpoint(path: "feed"), reconnection: reconnection).makeAsyncIterator()
            return try await iterator.next()
        }
        // Waits of 1, 2 and 4 s (the server's retry, doubled after each connection without an event).
        for wait in [1000, 2000, 4000] {
            #expect(await eventually { clock.pendingAlarms > 0 }, "no wait before \(wait) ms")
            let connections = mock.recordedRequests.count
            clock.advance(by: .milliseconds(wait - 1))
            #expect(mock.recordedRequests.count == connections && clock.pendingAlarms > 0, "reconnected before \(wait) ms")
            clock.advance(by: .milliseconds(1))
            #expect(await eventually { mock.recordedRequests.count == connections + 1 }, "no reconnection after \(wait) ms")
        }
        let error = await #expect(throws: NetworkError.self) { try await reading.value }
        #expect(error?.kind == .connectionClosed && error?.message.contains("without an event") == true, "\(String(describing: error))")
        #expect(mock.recordedRequests.count == 4)
        await client.shutdown()
    }

    @Test("an event stream's reading is one call: one report, with every connection's attempts and one request id")
    func oneCall() async throws {
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("retry: 1000\nid: 1\ndata: first\n\n".utf8))
        let calls = RecordedCalls()
        let (client, mock, clock) = try Self.feed([stream, .status(204)], observers: [calls])
        let reading = Task {
            var events: [String] = []
            for try await event in client.events(RawEndpoint(path: "feed")) { events.append(event.data) }
            return events
        }
        #expect(await eventually { clock.pendingAlarms > 0 }, "no wait was scheduled")
        #expect(calls.all.isEmpty, "a connection's end is not the call's")
        clock.advance(by: .seconds(1))
        #expect(try await reading.value == ["first"])
        #expect(mock.recordedRequests.count == 2)
        let records = calls.all
        #expect(records.count == 1, "\(records)")
        #expect(records.first?.metrics.attempts == 2 && records.first?.error == nil && records.first?.status == 204)
        #expect(mock.recordedRequests.last?.head.headerFields[.init("Last-Event-ID")!] == "1")
        await client.shutdown()
    }

    /// Answers each connection with a body that streams: the first connection's sends an event
    /// and ends; the second's stays open until the test or the reader ends it. Records each
    /// connection's request id and `Last-Event-ID`, and whether its body was released.
    final class LiveFeed: Transport {
        let name = "live-feed"
        let sent = Mutex<[(id: String, lastEventID: String?)]>([])
        let open = Mutex<AsyncThrowingStream<Data, any Error>.Continuation?>(nil)
        let released = Mutex(0)

        func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
            let count = sent.withLock {
                $0.append((context.requestID, request.headerFields[HTTPField.Name("Last-Event-ID")!]))
                return $0.count
            }
            let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
            continuation.onTermination = { _ in self.released.withLock { $0 += 1 } }
            continuation.yield(Data("id: \(count)\ndata: event \(count)\n\n".utf8))
            if count == 1 { continuation.finish() } else { open.withLock { $0 = continuation } }
            return TransportResponse(
                head: HTTPResponse(status: .ok, headerFields: [.contentType: "text/event-stream"]),
                body: ResponseBody(stream: stream, expectedLength: nil))
        }

        func checkSettings(of configuration: ClientConfiguration) throws(ConfigurationError) {}
        func shutdown() async {}
    }

    @Test("streamed connections: one request id, Last-Event-ID on the next; a reader that drops a live body ends one cancelled call")
    func liveConnections() async throws {
        let clock = ManualTimeSource()
        let feed = LiveFeed()
        var configuration = ClientConfiguration(baseURL: "https://feed.test", transport: "live-feed")
        configuration.timeSource = clock
        let calls = RecordedCalls()
        let client = try NetworkClient(configuration: configuration, transport: feed, observers: [calls])
        var reconnection = EventStreamReconnection()
        reconnection.defaultDelay = .seconds(1)
        let reading = Task {
            var iterator = client.events(RawEndpoint(path: "feed"), reconnection: reconnection).makeAsyncIterator()
            var events: [String] = []
            while let event = try await iterator.next() {
                events.append(event.data)
                if events.count == 2 { break }
            }
            return events
        }
        #expect(await eventually { clock.pendingAlarms > 0 }, "no wait was scheduled")
        clock.advance(by: .seconds(1))
        #expect(try await reading.value == ["event 1", "event 2"])
        let sent = feed.sent.withLock { $0 }
        #expect(sent.count == 2 && sent[0].id == sent[1].id, "one call: one request id for every connection \(sent)")
        #expect(sent[0].lastEventID == nil && sent[1].lastEventID == "1")
        // The reader dropped the second connection's live body: it is released, and the call ends once.
        #expect(await eventually { feed.released.withLock { $0 } == 2 })
        #expect(await eventually { calls.all.count == 1 })
        #expect(calls.all.first?.error?.kind == .cancelled && calls.all.first?.metrics.attempts == 2, "\(calls.all)")
        // Nothing is left running: a graceful shutdown returns without its grace period passing.
        #expect(await Self.shutsDownAtOnce(client, clock), "a call still held the client")
    }

    @Test("an event stream dropped by its reader ends as one cancelled call, and leaves the running calls")
    func droppedReading() async throws {
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("id: 1\ndata: first\n\nid: 2\ndata: second\n\n".utf8))
        let calls = RecordedCalls()
        let (client, _, clock) = try Self.feed([stream], observers: [calls])
        do {
            var events = client.events(RawEndpoint(path: "feed")).makeAsyncIterator()
            #expect(try await events.next()?.data == "first")
        }
        #expect(await eventually { calls.all.count == 1 })
        #expect(calls.all.first?.error?.kind == .cancelled, "\(calls.all)")
        // Nothing is left running: a graceful shutdown returns without its grace period passing.
        #expect(await Self.shutsDownAtOnce(client, clock), "a call still held the client")
        #expect(calls.all.count == 1)
    }

    @Test("a graceful shutdown whose grace runs out ends a stream waiting to reconnect, as shut_down, without waiting out the wait")
    func shutdownDuringTheWait() async throws {
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("retry: 60000\nid: 1\ndata: first\n\n".utf8))
        let (client, mock, clock) = try Self.feed([stream, stream])
        let reading = Task { () -> NetworkError? in
            var iterator = client.events(RawEndpoint(path: "feed")).makeAsyncIterator()
            do {
                while try await iterator.next() != nil {}
                return nil
            } catch {
                return error as? NetworkError
            }
        }
        #expect(await eventually { clock.pendingAlarms > 0 }, "no wait was scheduled")
        let shutdown = Task { await client.shutdown(gracePeriod: .seconds(5)) }
        #expect(await eventually { clock.pendingAlarms > 1 }, "the grace period's alarm was not set")
        clock.advance(by: .seconds(5))
        let error = await reading.value
        #expect(error?.kind == .shutDown, "\(String(describing: error))")
        await shutdown.value
        #expect(mock.recordedRequests.count == 1, "no connection after the shutdown began")
    }
}
