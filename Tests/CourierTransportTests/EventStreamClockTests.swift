import Courier
import CourierConformance
import CourierMock
import CourierTestServer
import Foundation
import Testing

/// An event stream waits for its reconnection on the client's clock, so a test advances the
/// clock instead of sleeping.
@Suite("Event streams reconnect on the client's clock")
struct EventStreamClockTests {
    @Test("the server's retry holds the next connection until the clock has moved that far")
    func waitsOnTheClock() async throws {
        let clock = ManualTimeSource()
        let mock = MockTransport()
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("retry: 5000\nid: 1\ndata: first\n\n".utf8))
        mock.stub(.get, "/feed", responses: [stream, .status(204)])
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock)
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
        let clock = ManualTimeSource()
        let mock = MockTransport()
        let half = MockResponse.status(200, headers: ["Content-Type": "text/event-stream"], body: Data(": hi\nretry: 1000\ndata: ha".utf8))
        mock.stub(.get, "/feed", responses: Array(repeating: half, count: 10))
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock)
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
        let clock = ManualTimeSource()
        let mock = MockTransport()
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("retry: 1000\nid: 1\ndata: first\n\n".utf8))
        mock.stub(.get, "/feed", responses: [stream, .status(204)])
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        let calls = RecordedCalls()
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [calls])
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
        await client.shutdown()
    }

    @Test("an event stream dropped by its reader ends as one cancelled call, and leaves the running calls")
    func droppedReading() async throws {
        let clock = ManualTimeSource()
        let mock = MockTransport()
        let stream = MockResponse.status(
            200, headers: ["Content-Type": "text/event-stream"], body: Data("id: 1\ndata: first\n\nid: 2\ndata: second\n\n".utf8))
        mock.stub(.get, "/feed", responses: [stream])
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        let calls = RecordedCalls()
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [calls])
        do {
            var events = client.events(RawEndpoint(path: "feed")).makeAsyncIterator()
            #expect(try await events.next()?.data == "first")
        }
        #expect(await eventually { calls.all.count == 1 })
        #expect(calls.all.first?.error?.kind == .cancelled, "\(calls.all)")
        // Nothing is left running: the shutdown does not wait for the grace period (never, on this clock).
        await client.shutdown()
        #expect(calls.all.count == 1)
    }
}
