import Courier
import CourierMock
import Foundation
import Testing

@Suite("Retry")
struct RetryTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path = "x"
        var method: HTTPRequest.Method = .get
        var headers: RequestHeaders = [:]
        var body: RequestBody?
        var timeout: Duration?
    }

    static func client(
        _ mock: MockTransport, clock: any TimeSource = SystemTimeSource(), _ change: (inout RetryPolicy) -> Void = { _ in }
    ) throws -> NetworkClient {
        var policy = RetryPolicy()
        policy.baseDelay = .milliseconds(1)
        policy.maxDelay = .milliseconds(4)
        change(&policy)
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.retry = policy
        configuration.timeSource = clock
        return try NetworkClient(configuration: configuration, transport: mock)
    }

    @Test("full jitter stays inside the exponential envelope", arguments: [1, 2, 3, 4, 8, 40], [0.0, 0.5, 0.999_999])
    func envelope(retry: Int, random: Double) {
        let policy = RetryPolicy()  // 100 ms base, 5 s cap
        let ceiling = min(Duration.seconds(5), .milliseconds(100) * (1 << min(retry - 1, 30)))
        let wait = policy.backoff(beforeRetry: retry, random: random)
        #expect(wait >= .zero && wait <= ceiling)
        #expect(wait == ceiling * random)
    }

    @Test("Retry-After: seconds, HTTP dates (past and future), malformed")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .zero)
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:50 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Tuesday, 14-Nov-23 22:14:20 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:00:00 GMT", now: now) == .zero)
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse("-5", now: now) == nil)
    }

    @Test("retryable statuses are retried up to the limit; attempts are in the metrics", arguments: [408, 429, 500, 502, 503, 504])
    func retriesStatuses(status: Int) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(status), .status(status), .status(200, body: Data("ok".utf8))])
        let response = try await Self.client(mock).response(for: Call())
        #expect(response.value == Data("ok".utf8))
        #expect(response.metrics.attempts == 3)
        #expect(mock.recordedRequests.count == 3)
    }

    @Test("the last failure is returned when attempts run out")
    func exhausted() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let error = await #expect(throws: NetworkError.self) { try await Self.client(mock).send(Call()) }
        #expect(error?.status == 503)
        #expect(error?.metrics?.attempts == 3)
    }

    @Test(
        "transient errors are retried; permanent ones are not",
        arguments: [
            (NetworkError.Kind.connectFailure, true), (.connectionClosed, true), (.timedOut, true),
            (.tlsFailure, false), (.invalidResponse, false), (.responseTooLarge, false), (.cancelled, false),
        ])
    func errors(kind: NetworkError.Kind, retried: Bool) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.failure(NetworkError(kind: kind, phase: .connect, message: "injected")), .status(200)])
        let client = try Self.client(mock)
        let succeeded = (try? await client.send(Call())) != nil
        #expect(mock.recordedRequests.count == (retried ? 2 : 1))
        #expect(succeeded == retried)
    }

    @Test("non-idempotent methods are retried only with an Idempotency-Key")
    func idempotency() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", responses: [.status(503), .status(200), .status(503), .status(200)])
        let client = try Self.client(mock)
        await #expect(throws: NetworkError.self) { try await client.send(Call(method: .post, body: .text("a"))) }
        #expect(mock.recordedRequests.count == 1)
        _ = try await client.send(Call(method: .post, headers: ["Idempotency-Key": "k1"], body: .text("a")))
        // The second call got 200 at once (the stub's second answer), so one more request.
        #expect(mock.recordedRequests.count == 2)
        _ = try await client.send(Call(method: .put, body: .text("b")))
        #expect(mock.recordedRequests.count == 4)
        #expect(mock.recordedRequests.last?.body == Data("b".utf8))
    }

    @Test("a Retry-After above the cap ends the retries; one within it is honoured")
    func retryAfterCap() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503, headers: ["Retry-After": "120"]), .status(200)])
        await #expect(throws: NetworkError.self) { try await Self.client(mock).send(Call()) }
        #expect(mock.recordedRequests.count == 1)
        let second = MockTransport()
        second.stub(.get, "/x", responses: [.status(429, headers: ["Retry-After": "0"]), .status(200)])
        _ = try await Self.client(second).send(Call())
        #expect(second.recordedRequests.count == 2)
    }

    @Test("a wait that would pass the deadline is not taken")
    func deadline() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503, headers: ["Retry-After": "5"]), .status(200)])
        let error = await #expect(throws: NetworkError.self) { try await Self.client(mock).send(Call(timeout: .seconds(1))) }
        #expect(error?.status == 503)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("cancellation during the wait ends the call at once, as cancelled")
    func cancelDuringWait() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503, headers: ["Retry-After": "20"]))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock) { $0.maxRetryAfter = .seconds(30) }
        let task = Task { try await client.send(Call()) }
        await clock.waitForAlarms(2)  // the deadline and the Retry-After wait
        task.cancel()
        let error = await #expect(throws: NetworkError.self) { try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("the Retry-After wait is on the call's clock: the next attempt goes out when it has passed")
    func waitOnTheClock() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503, headers: ["Retry-After": "20"]), .status(200)])
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock) { $0.maxRetryAfter = .seconds(30) }
        let task = Task { try await client.response(for: Call(timeout: .seconds(60))) }
        await clock.waitForAlarms(2)
        clock.advance(by: .seconds(19))
        #expect(mock.recordedRequests.count == 1, "no second attempt a second before Retry-After")
        clock.advance(by: .seconds(1))
        let response = try await task.value
        #expect(response.head.status.code == 200)
        #expect(response.metrics.attempts == 2)
        #expect(mock.recordedRequests.count == 2)
    }
}
