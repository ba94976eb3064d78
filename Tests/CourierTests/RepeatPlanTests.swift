import CourierMock
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The one repeat policy of downloads and event streams, with no I/O but the mock's.
@Suite("RepeatPlan: the rule, the budget, the wait on the client's clock, the end")
struct RepeatPlanTests {
    struct Get: Endpoint {
        typealias Output = Data
        var path: String { "feed" }
    }

    struct Post: Endpoint {
        typealias Output = Data
        var path: String { "feed" }
        var method: HTTPRequest.Method { .post }
    }

    private func client(_ clock: ManualTimeSource, budget: RetryBudget = RetryBudget()) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://feed.test")
        configuration.timeSource = clock
        configuration.resilience.retryBudget = budget
        return try NetworkClient(configuration: configuration, transport: MockTransport())
    }

    @Test("a request that may not go again, an end that has come, a budget that refuses: each says so")
    func refusals() async throws {
        let clock = ManualTimeSource()
        let client = try client(clock)
        await #expect(throws: RepeatPlan.Refusal.notRepeatable) { try await RepeatPlan(Post(), on: client).again(after: .zero) }
        let ended = RepeatPlan(Get(), on: client, end: client.now())
        await #expect(throws: RepeatPlan.Refusal.pastEnd) { try await ended.again(after: .zero) }
        var none = RetryBudget()
        none.share = 0
        none.minPerSecond = 0
        let broke = try self.client(clock, budget: none)
        await #expect(throws: RepeatPlan.Refusal.budget) { try await RepeatPlan(Get(), on: broke).again(after: .zero) }
        try await RepeatPlan(Get(), on: client).again(after: .zero)
        await client.shutdown()
        await broke.shutdown()
    }

    @Test("the wait is on the client's clock; a wait that would reach the end is refused at once, spending no budget")
    func waitsOnTheClock() async throws {
        let clock = ManualTimeSource()
        let client = try client(clock)
        let plan = RepeatPlan(Get(), on: client)
        let waiting = Task { try await plan.again(after: .seconds(2)) }
        #expect(await eventually { clock.pendingAlarms > 0 })
        clock.advance(by: .seconds(2))
        try await waiting.value
        let bounded = RepeatPlan(Get(), on: client, end: client.now().advanced(by: .seconds(1)))
        await #expect(throws: RepeatPlan.Refusal.pastEnd) { try await bounded.again(after: .seconds(5)) }
        #expect(clock.pendingAlarms == 0)
        // Within the end: it waits.
        let within = Task { try await bounded.again(after: .milliseconds(500)) }
        #expect(await eventually { clock.pendingAlarms > 0 })
        clock.advance(by: .milliseconds(500))
        try await within.value
        await client.shutdown()
    }
}
