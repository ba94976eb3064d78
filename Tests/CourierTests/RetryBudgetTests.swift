import Courier
import CourierMock
import CourierResilience
import Foundation
import MetricsTestKit
import Testing

@Suite("Retry budget")
struct RetryBudgetTests {
    struct Call: Endpoint {
        typealias Output = Data
        var baseURL: String? = nil
        var path = "x"
    }

    /// A client whose retry middleware waits nothing (the jitter is always 0) on a manual clock,
    /// so the budget's window moves only when the test advances it.
    static func client(
        _ mock: MockTransport, clock: ManualTimeSource, observers: [any CallObserver] = [], _ change: (inout RetryBudget) -> Void
    ) throws -> NetworkClient {
        var budget = RetryBudget()
        change(&budget)
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.timeSource = clock
        configuration.exportsMetrics = false
        return try NetworkClient(
            configuration: configuration, transport: mock,
            middleware: [RetryMiddleware(policy: RetryPolicy(), budget: budget, random: { 0 })],
            observers: observers)
    }

    @Test("the allowance is the share of the calls plus the floor over the window, rounded down")
    func allowance() {
        var budget = RetryBudget()
        #expect(budget.allowance(calls: 0) == 100, "10 a second over 10 s")
        #expect(budget.allowance(calls: 1000) == 300)
        budget.minPerSecond = 0
        budget.share = 0.25
        #expect(budget.allowance(calls: 7) == 1)
        budget.window = .seconds(2)
        budget.minPerSecond = 3
        #expect(budget.allowance(calls: 0) == 6)
    }

    @Test("under 100% failures the retries stay within the share of the calls; the refused call ends with its own answer")
    func storm() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock) {
            $0.share = 0.2
            $0.minPerSecond = 0
        }
        var refused = 0
        for _ in 0..<50 {
            let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
            #expect(error?.status == 503, "the attempt's own answer, not a budget error")
            if error?.metrics?.retryRefusedByBudget == true { refused += 1 }
        }
        // Without the budget: 150 requests (3 attempts each). With it, call k may retry while the
        // retries so far are under ⌊0.2 k⌋: one retry at every fifth call.
        #expect(mock.recordedRequests.count == 60)
        #expect(refused == 50, "every call wanted a retry the budget did not have (each fifth got one, then none)")
    }

    @Test("the floor lets a quiet host be retried; spent, it refills as the window moves on")
    func floorAndWindow() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock) {
            $0.share = 0
            $0.minPerSecond = 1
            $0.window = .seconds(2)
        }
        for _ in 0..<4 { _ = try? await client.send(Call()) }
        #expect(mock.recordedRequests.count == 4 + 2, "two retries (1 a second over 2 s), then none")
        clock.advance(by: .seconds(1))
        _ = try? await client.send(Call())
        #expect(mock.recordedRequests.count == 7, "still inside the window: nothing left")
        clock.advance(by: .seconds(2))
        _ = try? await client.send(Call())
        #expect(mock.recordedRequests.count == 10, "the window moved past the retries: two more")
    }

    @Test("each host has its own budget")
    func perHost() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let client = try Self.client(mock, clock: ManualTimeSource()) {
            $0.share = 0
            $0.minPerSecond = 1
            $0.window = .seconds(1)
        }
        _ = try? await client.send(Call())
        _ = try? await client.send(Call())
        #expect(mock.recordedRequests.count == 3, "a.test: one retry, then spent")
        _ = try? await client.send(Call(baseURL: "https://b.test"))
        #expect(mock.recordedRequests.count == 5, "b.test still has its own")
        #expect(mock.recordedRequests.suffix(2).allSatisfy { $0.head.authority == "b.test" })
    }

    @Test("a success needs no budget: retries that succeed still count, and a spent budget never turns a success into a failure")
    func successes() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503), .status(200, body: Data("ok".utf8))])
        let client = try Self.client(mock, clock: ManualTimeSource()) {
            $0.share = 0
            $0.minPerSecond = 1
            $0.window = .seconds(1)
        }
        let first = try await client.response(for: Call())
        #expect(first.value == Data("ok".utf8))
        #expect(first.metrics.attempts == 2 && !first.metrics.retryRefusedByBudget)
        let second = try await client.response(for: Call())
        #expect(second.metrics.attempts == 1, "the mock's sequence ends on 200, which needs no retry")
    }

    @Test("the configuration's budget reaches the retry the configuration installs")
    func configured() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.exportsMetrics = false
        var retry = RetryPolicy()
        retry.baseDelay = .milliseconds(1)
        retry.maxDelay = .milliseconds(1)
        configuration.retry = retry
        configuration.resilience.retryBudget.share = 0
        configuration.resilience.retryBudget.minPerSecond = 0
        let client = try NetworkClient(configuration: configuration, transport: mock)
        for _ in 0..<3 {
            let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
            #expect(error?.metrics?.retryRefusedByBudget == true)
        }
        #expect(mock.recordedRequests.count == 3, "an empty budget: no retry at all (9 requests without it)")
    }

    @Test("the metrics export counts the calls the budget refused a retry")
    func exported() async throws {
        let metrics = TestMetrics()
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let client = try Self.client(mock, clock: ManualTimeSource(), observers: [MetricsExport(factory: metrics)]) {
            $0.share = 0
            $0.minPerSecond = 1
            $0.window = .seconds(1)
        }
        for _ in 0..<3 { _ = try? await client.send(Call()) }
        let refusals = try metrics.expectCounter(
            "courier_retry_budget_refusals", [("endpoint", "RetryBudgetTests.Call"), ("transport", "mock")])
        #expect(refusals.totalValue == 3, "the first call after its one retry, then the next two at once")
    }

    @Test("the budget is read from a configuration file, and values out of range name their key")
    func configuration() throws {
        let load = loadConfiguration
        let loaded = try load(#"{"resilience": {"retryBudget": {"share": 0.1, "minPerSecond": 2, "window": 30}}}"#)
        #expect(loaded.resilience.retryBudget.share == 0.1)
        #expect(loaded.resilience.retryBudget.minPerSecond == 2)
        #expect(loaded.resilience.retryBudget.window == .seconds(30))
        #expect(loaded.resilience.circuitBreaker == nil, "no breaker unless asked for")
        for (json, key) in [
            (#"{"resilience": {"retryBudget": {"share": 1.5}}}"#, "resilience.retryBudget.share"),
            (#"{"resilience": {"retryBudget": {"minPerSecond": 2.5}}}"#, "resilience.retryBudget.minPerSecond"),
            (#"{"resilience": {"retryBudget": {"window": 900}}}"#, "resilience.retryBudget.window"),
            (#"{"resilience": {"retryBudget": {"shares": 0.1}}}"#, "resilience.retryBudget.shares"),
            (#"{"resilience": {"retryBudgets": {}}}"#, "resilience.retryBudgets"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try load(json) }
            #expect(error?.key == key, "\(json)")
        }
    }
}
