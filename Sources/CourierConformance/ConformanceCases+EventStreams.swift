import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Server-sent events and JSON Lines, read through ``NetworkClient/events(_:reconnection:maxEventBytes:)``
/// and ``NetworkClient/jsonLines(_:as:decoder:maxLineBytes:)``: the same on every transport (issue 42).
extension ConformanceCases {
    /// Reconnection at once, so that no case waits on a clock.
    private static var promptly: EventStreamReconnection {
        var policy = EventStreamReconnection()
        policy.defaultDelay = .zero
        policy.minimumDelay = .zero
        return policy
    }

    /// Events arrive whole and in order across connections: each reconnection sends the last
    /// event ID, so none is repeated or lost, and the server's `204` ends the sequence.
    public static func serverSentEvents(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let feed = RawEndpoint(path: "events", query: [QueryItem("total", "5"), QueryItem("per", "2")])
            var seen: [ServerSentEvent] = []
            for try await event in client.events(feed, reconnection: promptly) { seen.append(event) }
            #expect(seen.map(\.id) == ["1", "2", "3", "4", "5"], "\(seen)")
            #expect(seen.allSatisfy { $0.type == "tick" } && seen.first?.data == "{\"n\":1}\nend", "\(seen)")
            // Three connections with events, then the one the server answers 204.
            #expect(server.requestCount == 4)
            // Without reconnection, the first connection's events only.
            var once: [String?] = []
            for try await event in client.events(feed, reconnection: .never) { once.append(event.id) }
            #expect(once == ["1", "2"])
            await client.shutdown()
        }
    }

    /// An answer that is not an event stream fails at once as `invalid_response`, with no
    /// reconnection; a stream whose server is gone fails with the connection's error once the
    /// reconnections allowed in a row are spent.
    public static func serverSentEventFailures(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let error = await expectNetworkError(.invalidResponse) {
                for try await _ in client.events(RawEndpoint(path: "echo"), reconnection: promptly) {}
            }
            #expect(error?.message.contains("text/event-stream") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(server.requestCount == 1, "a wrong answer was asked again")
            await client.shutdown()
        }
        let gone = try RefusingPort()
        defer { gone.close() }
        let client = try transport.makeClient(baseURL: gone.baseURL)
        var policy = promptly
        policy.maxAttempts = 2
        await expectNetworkError(.connectFailure) {
            for try await _ in client.events(RawEndpoint(path: "events"), reconnection: policy) {}
        }
        await client.shutdown()
    }

    /// JSON Lines decode one record per line (CRLF, a blank line and a last line without LF
    /// included); a line that does not decode fails as `decoding` after the records before it.
    public static func jsonLines(_ transport: ConformanceTransport) async throws {
        struct Record: Decodable, Sendable, Equatable { let n: Int }
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            var records: [Int] = []
            for try await record in client.jsonLines(RawEndpoint(path: "jsonl", query: [QueryItem("count", "4")]), as: Record.self) {
                records.append(record.n)
            }
            #expect(records == [1, 2, 3, 4])
            var before: [Int] = []
            let bad = RawEndpoint(path: "jsonl", query: [QueryItem("count", "4"), QueryItem("bad", "3")])
            let error = await expectNetworkError(.decoding) {
                for try await record in client.jsonLines(bad, as: Record.self) { before.append(record.n) }
            }
            #expect(before == [1, 2])
            #expect(error?.message.hasPrefix("line 4 ") == true, "\(error.map { "\($0)" } ?? "")")
            await client.shutdown()
        }
    }
}
