import Courier
import CourierMock
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// `NetworkClient.stream(_:)` and streamed request bodies through the chain, on the mock transport
/// and a manual clock: retry and replay, status refusal, the queue slot, graceful shutdown, the
/// endpoint name, and a body dropped unread.
@Suite("Streaming through the chain")
struct StreamingTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path = "upload"
        var method: HTTPRequest.Method = .put
        var body: RequestBody?
        var statusValidation: StatusValidation = .successful
        var endpointName: String?
        var requestQueue: RequestQueue?
    }

    /// Sees each call's endpoint name.
    final class NameWitness: Middleware {
        let names = Mutex<[String?]>([])
        func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Next) async throws -> TransportResponse {
            names.withLock { $0.append(context.endpointName) }
            return try await next(request, body, context)
        }
    }

    static func client(
        _ mock: MockTransport, retry: Bool = false, clock: any TimeSource = ManualTimeSource(), observers: [any CallObserver] = [],
        middleware: [any Middleware] = [], queue: RequestQueue? = nil
    ) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        if retry {
            var policy = RetryPolicy()
            policy.baseDelay = .milliseconds(1)
            policy.maxDelay = .milliseconds(1)
            configuration.retry = policy
        }
        configuration.timeSource = clock
        return try NetworkClient(configuration: configuration, transport: mock, middleware: middleware, observers: observers, queue: queue)
    }

    static let bytes = 3 * PatternBody.blockBytes + 17

    static func pattern() -> Data {
        var data = Data()
        for index in 0..<4 { data.append(contentsOf: PatternBody.block(index)) }
        return data.prefix(bytes)
    }

    @Test("a one-shot stream is sent once: retry gives up on a 503 rather than send an empty or partial body")
    func oneShotIsNotRetried() async throws {
        let mock = MockTransport()
        mock.stub(.put, "/upload", responses: [.status(503), .status(200)])
        let client = try Self.client(mock, retry: true, clock: SystemTimeSource())
        let body = RequestBody.stream(PatternBody.Chunks(byteCount: Self.bytes), length: Int64(Self.bytes))
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call(body: body)) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 503)
        #expect(mock.recordedRequests.count == 1)
        #expect(mock.recordedRequests.first?.body == Self.pattern())
        await client.shutdown()
    }

    @Test("a replayable stream is made anew for a retry and sent whole each time")
    func replayableIsRetried() async throws {
        let mock = MockTransport()
        mock.stub(.put, "/upload", responses: [.status(503), .status(200)])
        let client = try Self.client(mock, retry: true, clock: SystemTimeSource())
        let made = Atomic<Int>(0)
        let body = RequestBody.replayableStream(length: Int64(Self.bytes)) {
            made.add(1, ordering: .relaxed)
            return PatternBody.Chunks(byteCount: Self.bytes)
        }
        #expect(body.isReplayable)
        _ = try await client.send(Call(body: body))
        let madeCount = made.load(ordering: .relaxed)
        #expect(madeCount == 2)
        #expect(mock.recordedRequests.map(\.body) == [Self.pattern(), Self.pattern()])
        await client.shutdown()
    }

    @Test("a 307 that needs the body again is refused for a one-shot stream and followed for a replayable one; a 303 drops it")
    func redirects() async throws {
        let mock = MockTransport()
        mock.stub(.put, "/upload", .status(307, headers: ["Location": "/moved"]))
        mock.stub(.put, "/moved", .text("stored"))
        mock.stub(.post, "/upload", .status(303, headers: ["Location": "/result"]))
        mock.stub(.get, "/result", .text("done"))
        let client = try Self.client(mock)
        let oneShot = RequestBody.stream(PatternBody.Chunks(byteCount: Self.bytes), length: Int64(Self.bytes))
        let refused = await #expect(throws: NetworkError.self) { try await client.send(Call(body: oneShot)) }
        #expect(refused?.kind == .redirectRefused)
        #expect(mock.recordedRequests.map(\.path) == ["/upload"])

        mock.reset()
        mock.stub(.put, "/upload", .status(307, headers: ["Location": "/moved"]))
        mock.stub(.put, "/moved", .text("stored"))
        mock.stub(.post, "/upload", .status(303, headers: ["Location": "/result"]))
        mock.stub(.get, "/result", .text("done"))
        let replayable = RequestBody.replayableStream(length: Int64(Self.bytes)) { PatternBody.Chunks(byteCount: Self.bytes) }
        #expect(try await client.send(Call(body: replayable)) == Data("stored".utf8))
        #expect(mock.recordedRequests.map(\.path) == ["/upload", "/moved"])
        #expect(mock.recordedRequests.map(\.body) == [Self.pattern(), Self.pattern()])

        let seeOther = RequestBody.stream(PatternBody.Chunks(byteCount: Self.bytes), length: nil)
        #expect(try await client.send(Call(method: .post, body: seeOther)) == Data("done".utf8))
        await client.shutdown()
    }

    @Test("a negative length is an invalid request, and nothing is sent")
    func negativeLength() async throws {
        let mock = MockTransport()
        let client = try Self.client(mock)
        let body = RequestBody.stream(PatternBody.Chunks(byteCount: 10), length: -1)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call(body: body)) }
        #expect(error?.kind == .invalidRequest)
        #expect(mock.recordedRequests.isEmpty)
        await client.shutdown()
    }

    @Test("stream(_:) refuses a status the endpoint does not accept, with the start of the body; .any passes it on")
    func refusedStatus() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/upload", .text("gone", status: 410))
        let client = try Self.client(mock)
        let error = await #expect(throws: NetworkError.self) { try await client.stream(Call(method: .get)) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 410)
        #expect(error?.responseBody == Data("gone".utf8))
        let response = try await client.stream(Call(method: .get, statusValidation: .any))
        #expect(response.head.status.code == 410)
        var text = Data()
        for try await chunk in response.body { text.append(chunk) }
        #expect(text == Data("gone".utf8))
        await client.shutdown()
    }

    @Test("the endpoint name reaches middleware and labels the call's record, once the body has ended")
    func endpointName() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/upload", .text("ok"))
        let records = RecordedCalls()
        let witness = NameWitness()
        let client = try Self.client(mock, observers: [records], middleware: [witness])
        let response = try await client.stream(Call(method: .get, endpointName: "getUpload"))
        for try await _ in response.body {}
        #expect(records.all.map(\.endpoint) == ["getUpload"])
        #expect(records.all.first?.metrics.bytesReceived == 2)
        _ = try await client.send(Call(method: .get))
        #expect(records.all.map(\.endpoint) == ["getUpload", "StreamingTests.Call"])
        #expect(witness.names.withLock { $0 } == ["getUpload", nil])
        await client.shutdown()
    }

    /// A transport whose body streams until the test ends it: the call is still running meanwhile.
    final class OpenBodyTransport: Transport {
        let name = "open-body"
        let continuation = Mutex<AsyncThrowingStream<Data, any Error>.Continuation?>(nil)
        func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
            let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
            continuation.yield(Data("first".utf8))
            self.continuation.withLock { $0 = continuation }
            return TransportResponse(head: HTTPResponse(status: .ok), body: ResponseBody(stream: stream, expectedLength: nil))
        }
        func shutdown() async {}
    }

    @Test("a body still streaming is observed at its end; a body already whole at the head ends the call at once")
    func observedAtTheEnd() async throws {
        let open = OpenBodyTransport()
        let records = RecordedCalls()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "open-body")
        configuration.timeSource = ManualTimeSource()
        let client = try NetworkClient(configuration: configuration, transport: open, observers: [records])
        let response = try await client.stream(Call(method: .get))
        var iterator = response.body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("first".utf8))
        #expect(records.all.isEmpty, "the call runs until its body ends")
        open.continuation.withLock { $0?.finish() }
        #expect(try await iterator.next() == nil)
        #expect(records.all.count == 1)
        #expect(records.all.first?.error == nil)
        #expect(records.all.first?.metrics.bytesReceived == 5)

        let mock = MockTransport()
        mock.stub(.get, "/upload", .text("whole"))
        let buffered = try Self.client(mock, observers: [records])
        _ = try await buffered.stream(Call(method: .get))
        #expect(records.all.count == 2, "a body that arrived with its head ends the call before stream(_:) returns")
        await client.shutdown()
        await buffered.shutdown()
    }

    @Test("a body dropped unread ends the call as cancelled, once")
    func droppedBody() async throws {
        let open = OpenBodyTransport()
        let records = RecordedCalls()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "open-body")
        configuration.timeSource = ManualTimeSource()
        let client = try NetworkClient(configuration: configuration, transport: open, observers: [records])
        do {
            let response = try await client.stream(Call(method: .get))
            #expect(response.head.status.code == 200)
        }
        #expect(records.all.count == 1)
        #expect(records.all.first?.error?.kind == .cancelled)
        open.continuation.withLock { $0?.finish() }
        #expect(records.all.count == 1)
        await client.shutdown()
    }

    @Test("a streamed call keeps its queue slot until its body ends")
    func queueSlot() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/upload", .text("body"))
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1, maxConcurrentPerHost: 1))
        let client = try Self.client(mock, queue: queue)
        let first = try await client.stream(Call(method: .get))
        #expect(queue.status.running == 1)
        let second = Task { try await client.send(Call(method: .get)) }
        #expect(await eventually { queue.status.waiting == 1 }, "the second call must wait for the first body")
        for try await _ in first.body {}
        #expect(try await second.value == Data("body".utf8))
        #expect(queue.status.running == 0)
        await client.shutdown()
    }

    @Test("a graceful shutdown waits for a streamed body until its grace period ends")
    func gracefulShutdown() async throws {
        let open = OpenBodyTransport()
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "open-body")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: open)
        let response = try await client.stream(Call(method: .get))
        let stopped = Atomic<Bool>(false)
        let shutdown = Task {
            await client.shutdown(gracePeriod: .seconds(30))
            stopped.store(true, ordering: .relaxed)
        }
        #expect(await eventually { client.isShuttingDown })
        // The deadline's alarm and the grace period's: both wait on the manual clock.
        await clock.waitForAlarms(2)
        let stoppedEarly = stopped.load(ordering: .relaxed)
        #expect(stoppedEarly == false)
        var body = Data()
        var iterator = response.body.makeAsyncIterator()
        body.append(try await iterator.next() ?? Data())
        open.continuation.withLock { $0?.finish() }
        while let chunk = try await iterator.next() { body.append(chunk) }
        #expect(body == Data("first".utf8))
        await shutdown.value
        let stoppedAfter = stopped.load(ordering: .relaxed)
        #expect(stoppedAfter)
    }
}
