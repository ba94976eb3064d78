import Courier
import CourierStreaming
import Foundation
import Synchronization
import Testing

/// Downloads, event streams and JSON Lines are long transfers: the request timeout bounds only the
/// wait for their head; their body is bounded by the stall limit (and a download's optional total),
/// on the client's clock.
@Suite("Long transfers: a stall limit, not the request timeout")
struct LongTransferTests {
    struct Feed: Endpoint {
        typealias Output = Data
        var path = "feed"
        var method: HTTPRequest.Method = .get
        var headers: RequestHeaders = [:]
    }

    /// Answers at once; its body hands `chunks` pieces, moving the clock by `step` inside each
    /// read (so time passes only while the reader waits, under its stall alarm), then ends or,
    /// with `stallsAfter`, waits until the call's deadline ends it. Like every transport, it stops
    /// once the call's deadline has passed.
    final class DripTransport: Transport {
        let name = "drip"
        let clock: ManualTimeSource
        let chunks: Int
        let step: Duration
        let stallsAfter: Int?
        let contentType: String
        let bodies: @Sendable (Int) -> Data
        let sent = Mutex<[HTTPRequest]>([])

        init(
            clock: ManualTimeSource, chunks: Int, step: Duration, stallsAfter: Int? = nil,
            contentType: String = "application/octet-stream",
            bodies: @escaping @Sendable (Int) -> Data = { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 1000) }
        ) {
            self.clock = clock
            self.chunks = chunks
            self.step = step
            self.stallsAfter = stallsAfter
            self.contentType = contentType
            self.bodies = bodies
        }

        func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
            sent.withLock { $0.append(request) }
            let source = DripBody(transport: self, context: context)
            return TransportResponse(
                head: HTTPResponse(status: .ok, headerFields: [.contentType: contentType]),
                body: ResponseBody(source: source, expectedLength: nil))
        }

        /// The stall limit is the core's for a long transfer's body; this transport has no other setting.
        func checkSettings(of configuration: ClientConfiguration) throws(ConfigurationError) {}

        func shutdown() async {}
    }

    /// One drip body, read by one task.
    final class DripBody: ResponseBodySource, @unchecked Sendable {
        let transport: DripTransport
        let context: RequestContext
        var index = 0
        /// Ends when the call's deadline passes: what a stalled read waits for.
        let ended: AsyncStream<Void>

        init(transport: DripTransport, context: RequestContext) {
            self.transport = transport
            self.context = context
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            ended = stream
            context.onDeadline { continuation.finish() }
        }

        func next() async throws -> Data? {
            if index == transport.stallsAfter {
                for await _ in ended {}
                throw CancellationError()
            }
            guard index < transport.chunks else { return nil }
            transport.clock.advance(by: transport.step)
            if context.deadlineHasPassed { throw CancellationError() }
            index += 1
            return transport.bodies(index - 1)
        }
    }

    static func client(_ transport: DripTransport, timeout: Duration = .seconds(60), stall: Duration? = nil) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://files.test", transport: "drip")
        configuration.timeSource = transport.clock
        configuration.requestTimeout = timeout
        configuration.stallTimeout = stall
        return try NetworkClient(configuration: configuration, transport: transport)
    }

    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-long-\(UUID().uuidString).bin")
    }

    @Test("a download that keeps receiving runs past the 60 s request timeout: 14 pieces 5 s apart")
    func downloadRunsPastTheTimeout() async throws {
        let clock = ManualTimeSource()
        let transport = DripTransport(clock: clock, chunks: 14, step: .seconds(5))
        let client = try Self.client(transport)
        let file = Self.destination()
        defer { try? FileManager.default.removeItem(at: file) }
        let start = clock.now
        let result = try await client.download(Feed(), to: file)
        #expect(start.duration(to: clock.now) == .seconds(70))
        #expect(result.bytes == 14_000)
        #expect(result.resumed == 0 && result.restarted == 0)
        #expect(transport.sent.withLock { $0.count } == 1)
        await client.shutdown()
    }

    @Test("a body that stops sending fails as timed_out at the stall limit, naming it, whatever the request timeout")
    func stalledBodyTimesOut() async throws {
        let clock = ManualTimeSource()
        let transport = DripTransport(
            clock: clock, chunks: 3, step: .seconds(1), stallsAfter: 2, contentType: "text/event-stream",
            bodies: { Data("data: \($0)\n\n".utf8) })
        let client = try Self.client(transport, timeout: .seconds(600), stall: .seconds(20))
        var events = client.events(Feed(), reconnection: .never).makeAsyncIterator()
        #expect(try await events.next()?.data == "0")
        #expect(try await events.next()?.data == "1")
        // Each wait's alarm is cancelled once its piece is in: none is left while nobody reads.
        #expect(clock.pendingAlarms == 0)
        let rest = Task {
            var iterator = events
            return try await iterator.next()
        }
        // The reader waits for a third piece that never comes: its stall alarm is 20 s ahead.
        #expect(await waitUntil { clock.pendingAlarms == 1 })
        clock.advance(by: .seconds(19))
        #expect(clock.pendingAlarms == 1, "nothing rang before the stall limit")
        clock.advance(by: .seconds(1))
        // Bounded: a stall limit that did not ring fails here instead of hanging the run.
        let ended = await waitUntil(.seconds(20)) { clock.pendingAlarms == 0 }
        #expect(ended, "the stall alarm rang and nothing else is pending")
        if !ended { rest.cancel() }
        let error = await #expect(throws: NetworkError.self) { try await rest.value }
        #expect(error?.kind == .timedOut)
        #expect(error?.phase == .receiving)
        #expect(error?.message.contains("stall limit") == true)
        #expect(transport.sent.withLock { $0.count } == 1)
        await client.shutdown()
    }

    @Test("a download's maxDuration ends it even while bytes keep coming; a non-positive one is refused")
    func downloadTotal() async throws {
        let clock = ManualTimeSource()
        let transport = DripTransport(clock: clock, chunks: 100, step: .seconds(5))
        let client = try Self.client(transport)
        var options = DownloadOptions()
        options.maxDuration = .seconds(42)
        options.resumes = false
        let error = await #expect(throws: NetworkError.self) { try await client.download(Feed(), to: Self.destination(), options: options) }
        #expect(error?.kind == .timedOut)
        #expect(error?.message.contains("total time limit") == true)
        options.maxDuration = .zero
        let refused = await #expect(throws: NetworkError.self) {
            try await client.download(Feed(), to: Self.destination(), options: options)
        }
        #expect(refused?.kind == .invalidRequest)
        await client.shutdown()
    }

    @Test("an event stream that keeps sending events stays on one connection past the request timeout")
    func eventStreamRunsPastTheTimeout() async throws {
        let clock = ManualTimeSource()
        let transport = DripTransport(
            clock: clock, chunks: 10, step: .seconds(10), contentType: "text/event-stream", bodies: { Data("data: \($0)\n\n".utf8) })
        let client = try Self.client(transport)
        var reconnection = EventStreamReconnection()
        reconnection.isEnabled = false
        var seen: [String] = []
        for try await event in client.events(Feed(), reconnection: reconnection) { seen.append(event.data) }
        #expect(seen == (0..<10).map(String.init))
        #expect(transport.sent.withLock { $0.count } == 1)
        await client.shutdown()
    }

    @Test("a POST event stream without an Idempotency-Key is not opened again; with one, it is")
    func eventStreamRepeatRule() async throws {
        let clock = ManualTimeSource()
        let transport = DripTransport(
            clock: clock, chunks: 1, step: .zero, contentType: "text/event-stream", bodies: { Data("data: \($0)\n\n".utf8) })
        let client = try Self.client(transport)
        var reconnection = EventStreamReconnection()
        reconnection.defaultDelay = .zero
        reconnection.minimumDelay = .zero
        reconnection.maxAttempts = 1
        var posts = 0
        for try await _ in client.events(Feed(method: .post), reconnection: reconnection) { posts += 1 }
        #expect(posts == 1)
        #expect(transport.sent.withLock { $0.count } == 1, "the POST's stream ended with its connection")
        var keyed = Feed(method: .post)
        keyed.headers = ["Idempotency-Key": "feed-1"]
        var iterator = client.events(keyed, reconnection: reconnection).makeAsyncIterator()
        #expect(try await iterator.next()?.data == "0")
        #expect(try await iterator.next()?.data == "0", "the second connection's event")
        #expect(transport.sent.withLock { $0.count } == 3, "a keyed POST reconnects")
        await client.shutdown()
    }

    @Test("a JSON Lines line over the cap fails whatever the chunking: whole with its LF in one piece, or split")
    func jsonLinesCapWholeLine() async throws {
        for pieces in [1, 3] {
            let clock = ManualTimeSource()
            let line = "[" + String(repeating: "1,", count: 60) + "1]\n"
            let bytes = Data(("[1]\n" + line).utf8)
            let size = (bytes.count + pieces - 1) / pieces
            let transport = DripTransport(
                clock: clock, chunks: pieces, step: .zero, contentType: "application/jsonl",
                bodies: { Data(bytes.dropFirst($0 * size).prefix(size)) })
            let client = try Self.client(transport)
            var records = client.jsonLines(Feed(), as: [Int].self, maxLineBytes: 100).makeAsyncIterator()
            #expect(try await records.next() == [1])
            let error = await #expect(throws: NetworkError.self) { _ = try await records.next() }
            #expect(error?.kind == .invalidResponse, "\(pieces) pieces")
            #expect(error?.message.contains("line 2") == true, "\(String(describing: error))")
            await client.shutdown()
        }
    }
}
