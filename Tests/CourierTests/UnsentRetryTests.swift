import Courier
import CourierMock
import CourierTestSupport
import Foundation
import MetricsTestKit
import Testing

/// An attempt that never reached the server is sent once more, whatever its method
/// (`Resilience.retriesUnsentRequests`, on by default); one that may have reached it never is.
@Suite("Resending attempts the server never saw")
struct UnsentRetryTests {
    struct Post: Endpoint {
        typealias Output = String
        var path: String { "orders" }
        var method: HTTPRequest.Method { .post }
        var body: RequestBody? = .text("order")
    }

    static let refused = NetworkError(kind: .connectFailure, phase: .connect, message: "Connection refused")

    static func client(_ mock: MockTransport, _ change: (inout ClientConfiguration) -> Void = { _ in }) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = ManualTimeSource()
        change(&configuration)
        return try NetworkClient(configuration: configuration, transport: mock)
    }

    @Test("a POST whose connection was refused is sent once more, and counted")
    func refusedPostIsResent() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/orders", responses: [.failure(Self.refused), .text("stored")])
        let client = try Self.client(mock)
        let response = try await client.response(for: Post())
        #expect(response.value == "stored")
        #expect(response.metrics.attempts == 2)
        #expect(response.metrics.unsentRetries == 1)
        #expect(mock.recordedRequests.map(\.body) == [Data("order".utf8), Data("order".utf8)])
        await client.shutdown()
    }

    @Test(
        "a stream the server did not process (requestNotProcessed) is resent like a refused connection, counted in courier_call_resends; the budget bounds it"
    )
    func notProcessedIsResent() async throws {
        var unprocessed = NetworkError(kind: .connectionClosed, phase: .awaitingResponse, message: "REFUSED_STREAM")
        unprocessed.requestNotProcessed = true
        #expect(unprocessed.neverReachedServer)
        let mock = MockTransport()
        mock.stub(.post, "/orders", responses: [.failure(unprocessed), .text("stored"), .failure(unprocessed), .text("never")])
        let metrics = TestMetrics()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = ManualTimeSource()
        configuration.resilience.retryBudget.share = 0
        configuration.resilience.retryBudget.minPerSecond = 1
        configuration.resilience.retryBudget.window = .seconds(1)
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [MetricsExport(factory: metrics)])
        let response = try await client.response(for: Post())
        #expect(response.value == "stored")
        #expect(response.metrics.unsentRetries == 1)
        let resends = try metrics.expectCounter(
            "courier_call_resends", [("endpoint", "UnsentRetryTests.Post"), ("transport", "mock"), ("by", "courier")])
        #expect(resends.totalValue == 1)
        // The budget (one a second) is spent: the next one is not resent, and the refusal is noted.
        let error = await #expect(throws: NetworkError.self) { try await client.send(Post()) }
        #expect(error?.kind == .connectionClosed)
        #expect(error?.metrics?.retryRefusedByBudget == true)
        #expect(mock.recordedRequests.count == 3)
        await client.shutdown()
    }

    @Test("exactly once more: a second refusal fails the call")
    func onlyOnce() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/orders", responses: [.failure(Self.refused), .failure(Self.refused), .text("never")])
        let client = try Self.client(mock)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Post()) }
        #expect(error?.kind == .connectFailure)
        #expect(error?.metrics?.attempts == 2)
        #expect(mock.recordedRequests.count == 2)
        await client.shutdown()
    }

    @Test(
        "what may have reached the server is not resent; nor a one-shot stream; nor anything when turned off",
        arguments: [
            ("sent", NetworkError(kind: .connectionClosed, phase: .awaitingResponse, message: "reset")),
            ("dns", NetworkError(kind: .dnsFailure, phase: .dns, message: "no such host")),
        ])
    func notResent(name: String, failure: NetworkError) async throws {
        let mock = MockTransport()
        mock.stub(.post, "/orders", responses: [.failure(failure), .text("second")])
        let client = try Self.client(mock)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Post()) }
        #expect(error?.kind == failure.kind, "\(name)")
        #expect(mock.recordedRequests.count == 1, "\(name)")
        await client.shutdown()
    }

    @Test("a one-shot streamed body is not resent, and nothing is when the setting is off")
    func oneShotAndOff() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/orders", responses: [.failure(Self.refused), .text("second")])
        let client = try Self.client(mock)
        let stream = RequestBody.stream(PatternBody.Chunks(byteCount: 10), length: 10)
        _ = await #expect(throws: NetworkError.self) { try await client.send(Post(body: stream)) }
        #expect(mock.recordedRequests.count == 1)
        await client.shutdown()

        let off = MockTransport()
        off.stub(.post, "/orders", responses: [.failure(Self.refused), .text("second")])
        let offClient = try Self.client(off) { $0.resilience.retriesUnsentRequests = false }
        _ = await #expect(throws: NetworkError.self) { try await offClient.send(Post()) }
        #expect(off.recordedRequests.count == 1)
        #expect(try loadConfiguration(#"{"resilience": {"retriesUnsentRequests": false}}"#).resilience.retriesUnsentRequests == false)
        await offClient.shutdown()
    }
}
