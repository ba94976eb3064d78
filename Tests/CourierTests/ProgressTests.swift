import Courier
import CourierCache
import CourierMock
import CourierStreaming
import Foundation
import HTTPTypes
import Testing

@Suite("Progress")
struct ProgressTests {
    @Test("the throttle: the first report always; then only once the interval has passed and the bytes moved by the share")
    func throttle() {
        let throttle = ProgressReporter.Throttle(interval: .milliseconds(100), fraction: 0.1)
        let start = ContinuousClock.now
        var last: ProgressReporter.Throttle.LastReport?
        var progress = TransferProgress(expectedBytesSent: 0, expectedBytesReceived: 1000)
        #expect(throttle.allows(progress, at: start, after: &last, force: false))
        progress.bytesReceived = 500
        #expect(!throttle.allows(progress, at: start + .milliseconds(99), after: &last, force: false), "before the interval")
        progress.bytesReceived = 550
        #expect(throttle.allows(progress, at: start + .milliseconds(100), after: &last, force: false))
        progress.bytesReceived = 600
        #expect(!throttle.allows(progress, at: start + .seconds(5), after: &last, force: false), "less than 10% moved")
        #expect(throttle.allows(progress, at: start + .seconds(5), after: &last, force: true), "a forced report")
        progress.bytesReceived = 700
        #expect(throttle.allows(progress, at: start + .milliseconds(5100), after: &last, force: false))
        // Without an expected length only the interval counts.
        var open = TransferProgress()
        var openLast: ProgressReporter.Throttle.LastReport?
        #expect(throttle.allows(open, at: start, after: &openLast, force: false))
        open.bytesReceived = 1
        #expect(!throttle.allows(open, at: start + .milliseconds(50), after: &openLast, force: false))
        #expect(throttle.allows(open, at: start + .milliseconds(100), after: &openLast, force: false))
        // Negative and non-finite settings mean no throttle, never a crash.
        let none = ProgressReporter.Throttle(interval: .seconds(-1), fraction: .nan)
        #expect(none.interval == .zero && none.fraction == 0)
    }

    @Test("the fractions: nil while a length is unknown, 1 for an empty body, never above 1")
    func fractions() {
        #expect(TransferProgress(bytesReceived: 5).fractionReceived == nil)
        #expect(TransferProgress(bytesReceived: 0, expectedBytesReceived: 0).fractionReceived == 1)
        #expect(TransferProgress(bytesReceived: 50, expectedBytesReceived: 200).fractionReceived == 0.25)
        #expect(TransferProgress(bytesReceived: 300, expectedBytesReceived: 200).fractionReceived == 1)
        #expect(TransferProgress(bytesSent: 10, expectedBytesSent: 40).fractionSent == 0.25)
    }

    @Test(
        "a call on a manual clock, in a queue or not: reports throttled by that clock as the body arrives, the last one when it ends",
        arguments: [false, true])
    func callOnManualClock(queued: Bool) async throws {
        let clock = ManualTimeSource()
        let feed = FeedTransport(length: 1000)
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "feed")
        configuration.timeSource = clock
        let queue = queued ? try RequestQueue(limits: .init(maxConcurrent: 1), timeSource: clock) : nil
        let client = try NetworkClient(configuration: configuration, transport: feed, queue: queue)
        let reporter = ProgressReporter(throttle: .init(interval: .milliseconds(100), fraction: 0.1))
        var updates = reporter.updates.makeAsyncIterator()
        let call = Task { try await client.send(FeedCall(progress: reporter)) }
        // The opening report and the head's may reach the reader as one: the latest wins.
        var head = await updates.next()
        if head?.expectedBytesReceived == nil { head = await updates.next() }
        #expect(head?.expectedBytesSent == 0 && head?.bytesSent == 0)
        #expect(head?.expectedBytesReceived == 1000 && head?.bytesReceived == 0)
        // A chunk within the interval is not reported; the one after it is, with everything so far.
        feed.yield(300)
        #expect(await waitUntil { feed.asked == 2 }, "the first chunk was not read")
        clock.advance(by: .milliseconds(100))
        feed.yield(400)
        let moved = await updates.next()
        #expect(moved?.bytesReceived == 700 && moved?.isFinished == false, "\(String(describing: moved))")
        feed.yield(300)
        feed.finish()
        let body = try await call.value
        #expect(body.count == 1000)
        let last = await updates.next()
        #expect(last?.bytesReceived == 1000 && last?.isFinished == true, "\(String(describing: last))")
        #expect(await updates.next() == nil, "the updates go on after the last report")
        await client.shutdown()
    }

    @Test("the handler form: every report on the handler's isolation, in order, the last one included")
    func handlerOnMainActor() async throws {
        let seen = Locked<[TransferProgress]>([])
        let reporter = ProgressReporter(throttle: .init(interval: .zero, fraction: 0)) { @MainActor update in
            MainActor.assertIsolated()
            seen.withLock { $0.append(update) }
        }
        let feed = FeedTransport(length: 10)
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", transport: "feed"), transport: feed)
        let call = Task { try await client.send(FeedCall(progress: reporter)) }
        feed.yield(4)
        feed.yield(6)
        feed.finish()
        _ = try await call.value
        #expect(await waitUntil { seen.withLock { $0.last?.isFinished == true } })
        let reports = seen.withLock { $0 }
        #expect(reports.last?.bytesReceived == 10)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "\(reports)")
        await client.shutdown()
    }

    @Test("a reporter given to a second call fails that call as an invalid request; a call that cannot be built still ends its reports")
    func oneCallPerReporter() async throws {
        let feed = FeedTransport(length: 0)
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", transport: "feed"), transport: feed)
        let reporter = ProgressReporter()
        feed.finish()
        _ = try await client.send(FeedCall(progress: reporter))
        let error = await #expect(throws: NetworkError.self) { try await client.send(FeedCall(progress: reporter)) }
        #expect(error?.kind == .invalidRequest && error?.message.contains("progress reporter") == true, "\(String(describing: error))")
        #expect(feed.calls == 1)

        let unbuilt = ProgressReporter()
        var broken = FeedCall(progress: unbuilt)
        broken.headers = ["X-Note": "a\r\nInjected: 1"]
        await #expect(throws: NetworkError.self) { try await client.send(broken) }
        var last: TransferProgress?
        for await update in unbuilt.updates { last = update }
        #expect(last?.isFinished == true)
        await client.shutdown()
    }

    @Test("a reporter no call will report to ends at once: an API object cancelled before it started, an event stream, JSON Lines")
    func unusedReporters() async throws {
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", transport: "feed"), transport: FeedTransport(length: 0))
        func last(_ reporter: ProgressReporter) async -> TransferProgress? {
            var last: TransferProgress?
            for await update in reporter.updates { last = update }
            return last
        }
        let cancelled = ProgressReporter()
        let api = FeedAPI(client: client, reporter: cancelled)
        api.cancel()
        #expect(throws: NetworkError.self) { try api.start() }
        #expect(await last(cancelled) == TransferProgress(isFinished: true))

        let events = ProgressReporter()
        _ = client.events(FeedCall(progress: events))
        #expect(await last(events) == TransferProgress(isFinished: true))
        let lines = ProgressReporter()
        _ = client.jsonLines(FeedCall(progress: lines), as: Int.self)
        #expect(await last(lines) == TransferProgress(isFinished: true))
        await client.shutdown()
    }

    /// Every report of `reporter` while `call` runs, read beside it.
    static func reports(_ reporter: ProgressReporter, during call: @Sendable () async throws -> Void) async throws -> [TransferProgress] {
        let reading = Task {
            var seen: [TransferProgress] = []
            for await update in reporter.updates { seen.append(update) }
            return seen
        }
        try await call()
        return await reading.value
    }

    @Test("a redirect that drops the body keeps the hop's bytes sent; a cache hit receives nothing; both end")
    func redirectAndCache() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/upload", .status(303, headers: ["Location": "/done"]))
        mock.stub(.get, "/done", .text("done"))
        mock.stub(.get, "/cached", .status(200, headers: ["Cache-Control": "max-age=600"], body: Data("kept".utf8)))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.cache = ResponseCache.memory()
        let client = try NetworkClient(configuration: configuration, transport: mock)
        let every = ProgressReporter.Throttle(interval: .zero, fraction: 0)

        let upload = ProgressReporter(throttle: every)
        let posted = try await Self.reports(upload) {
            _ = try await client.send(RawCall(path: "upload", method: .post, body: .data(Data(count: 5000)), progress: upload))
        }
        #expect(posted.last?.bytesSent == 5000 && posted.last?.expectedBytesSent == 5000, "\(posted)")
        #expect(posted.last?.bytesReceived == 4 && posted.last?.expectedBytesReceived == 4 && posted.last?.isFinished == true, "\(posted)")

        _ = try await client.send(RawCall(path: "cached"))
        let hit = ProgressReporter(throttle: every)
        let cached = try await Self.reports(hit) { _ = try await client.send(RawCall(path: "cached", progress: hit)) }
        #expect(mock.recordedRequests.filter { $0.head.path == "/cached" }.count == 1, "the second call was not a hit")
        #expect(cached.last?.bytesReceived == 0 && cached.last?.isFinished == true, "\(cached)")
        await client.shutdown()
    }
}

/// Any call, with a reporter.
struct RawCall: Endpoint {
    typealias Output = Data
    var path: String
    var method: HTTPRequest.Method = .get
    var body: RequestBody? = nil
    var progress: ProgressReporter? = nil
    var decoder: ResponseDecoder<Data> { .data }
}

/// An API object with a reporter.
final class FeedAPI: BaseAPI<Data>, @unchecked Sendable {
    let reporter: ProgressReporter
    init(client: NetworkClient, reporter: ProgressReporter) {
        self.reporter = reporter
        super.init(client: client)
    }
    override var path: String { "feed" }
    override var progress: ProgressReporter? { reporter }
    override var decoder: ResponseDecoder<Data> { .data }
}

/// One GET whose answer ``FeedTransport`` feeds.
struct FeedCall: Endpoint {
    typealias Output = Data
    var path = "feed"
    var headers: RequestHeaders = [:]
    var progress: ProgressReporter?
    var decoder: ResponseDecoder<Data> { .data }
}

/// A transport whose one answer's body the test feeds, chunk by chunk, and sees read.
final class FeedTransport: Transport {
    /// The body, read one chunk per ``next()`` by the call.
    final class Chunks: ResponseBodySource, @unchecked Sendable {
        private var iterator: AsyncStream<Data>.AsyncIterator
        let asked = Locked(0)
        init(_ stream: AsyncStream<Data>) { iterator = stream.makeAsyncIterator() }
        func next() async throws -> Data? {
            asked.withLock { $0 += 1 }
            return await iterator.next()
        }
    }

    let length: Int64
    private let chunks: Chunks
    private let continuation: AsyncStream<Data>.Continuation
    private let count = Locked(0)

    init(length: Int64) {
        self.length = length
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        chunks = Chunks(stream)
        self.continuation = continuation
    }

    var name: String { "feed" }
    var calls: Int { count.withLock { $0 } }
    /// How many chunks the call has asked for.
    var asked: Int { chunks.asked.withLock { $0 } }

    func yield(_ bytes: Int) { continuation.yield(Data(repeating: 7, count: bytes)) }
    func finish() { continuation.finish() }

    func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        count.withLock { $0 += 1 }
        return TransportResponse(
            head: HTTPResponse(status: .ok, headerFields: [.contentLength: "\(length)"]),
            body: ResponseBody(source: chunks, expectedLength: length))
    }

    func shutdown() async {}
}
