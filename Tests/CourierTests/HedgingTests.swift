import Courier
import CourierMock
import CourierResilience
import Foundation
import MetricsTestKit
import Testing

/// Hedging (`Resilience.hedging`) on the mock transport and a manual clock: a slow idempotent call
/// gets one copy at its endpoint's percentile and the first answer wins; nothing else is hedged.
@Suite("Hedging")
struct HedgingTests {
    struct Call: Endpoint {
        typealias Output = String
        var path = "x"
        var method: HTTPRequest.Method = .get
        var body: RequestBody?
    }

    static func policy(_ change: (inout HedgingPolicy) -> Void = { _ in }) -> HedgingPolicy {
        var policy = HedgingPolicy()
        policy.window = 20
        policy.minimumSamples = 10
        policy.maxExtraShare = 0.1
        policy.minimumDelay = .milliseconds(5)
        change(&policy)
        return policy
    }

    static func client(
        _ mock: MockTransport, clock: ManualTimeSource, policy: HedgingPolicy = policy(), observers: [any CallObserver] = []
    ) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        configuration.resilience.hedging = policy
        configuration.exportsMetrics = false
        return try NetworkClient(configuration: configuration, transport: mock, observers: observers)
    }

    /// Ten quick calls: the endpoint's latencies (all zero on the manual clock), so its calls are hedged after 5 ms.
    static func warmUp(_ client: NetworkClient, method: HTTPRequest.Method = .get) async throws {
        for _ in 0..<10 { _ = try await client.send(Call(method: method)) }
    }

    static let warm = [MockResponse](repeating: .text("warm"), count: 10)

    @Test("a slow call gets one copy at the percentile; the copy's answer wins and the first copy is cancelled")
    func hedgeWins() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: Self.warm + [.text("slow", delay: .seconds(1)), .text("copy")])
        let clock = ManualTimeSource()
        let metrics = TestMetrics()
        let client = try Self.client(mock, clock: clock, observers: [MetricsExport(factory: metrics)])
        try await Self.warmUp(client)
        let call = Task { try await client.response(for: Call()) }
        // The deadline, the first copy's one-second wait, the hedge's 5 ms timer.
        await clock.waitForAlarms(3)
        clock.advance(by: .milliseconds(5))
        let response = try await call.value
        #expect(response.value == "copy")
        #expect(response.metrics.hedges == 1)
        #expect(response.metrics.hedgeWon)
        #expect(response.metrics.attempts == 2)
        #expect(mock.recordedRequests.count == 12)
        let hedges = try metrics.expectCounter(
            "courier_call_hedges", [("endpoint", "HedgingTests.Call"), ("transport", "mock"), ("copy", "won")])
        #expect(hedges.totalValue == 1)
        await client.shutdown()
    }

    @Test("a call that answers before the percentile sends no copy")
    func fastCallIsNotHedged() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: Self.warm + [.text("soon", delay: .milliseconds(3))])
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        try await Self.warmUp(client)
        let call = Task { try await client.response(for: Call()) }
        await clock.waitForAlarms(3)
        clock.advance(by: .milliseconds(3))
        let response = try await call.value
        #expect(response.value == "soon")
        #expect(response.metrics.hedges == 0)
        #expect(mock.recordedRequests.count == 11)
        await client.shutdown()
    }

    @Test("a POST is never hedged, and no call is before the endpoint has its minimum of samples")
    func notHedged() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/x", responses: Self.warm + [.text("slow", delay: .seconds(1))])
        mock.stub(.get, "/y", .text("slow", delay: .seconds(1)))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        try await Self.warmUp(client, method: .post)
        let post = Task { try await client.send(Call(method: .post)) }
        await clock.waitForAlarms(2)  // the deadline and the one-second wait: no timer
        clock.advance(by: .seconds(1))
        #expect(try await post.value == "slow")
        let get = Task { try await client.send(Call(path: "y")) }
        await clock.waitForAlarms(2)
        clock.advance(by: .seconds(1))
        #expect(try await get.value == "slow")
        #expect(mock.recordedRequests.count == 12)
        await client.shutdown()
    }

    @Test("the copies are capped at the policy's share of the endpoint's recent calls")
    func cap() async throws {
        let mock = MockTransport()
        // Two slow calls in a row: at 10% of 11 calls only the first may get a copy.
        mock.stub(
            .get, "/x",
            responses: Self.warm + [.text("slow", delay: .seconds(1)), .text("copy"), .text("slow again", delay: .seconds(1))])
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        try await Self.warmUp(client)
        let first = Task { try await client.response(for: Call()) }
        await clock.waitForAlarms(3)
        clock.advance(by: .milliseconds(5))
        #expect(try await first.value.metrics.hedges == 1)
        let second = Task { try await client.response(for: Call()) }
        await clock.waitForAlarms(2)
        clock.advance(by: .seconds(1))
        let response = try await second.value
        #expect(response.value == "slow again")
        #expect(response.metrics.hedges == 0)
        await client.shutdown()
    }

    @Test("a first copy that fails before the percentile fails the call; nothing is resent")
    func failureBeforeTheTimer() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: Self.warm + [.failure(NetworkError(kind: .connectionClosed, phase: .receiving, message: "reset"))])
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        try await Self.warmUp(client)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
        #expect(error?.kind == .connectionClosed)
        #expect(mock.recordedRequests.count == 11)
        await client.shutdown()
    }

    @Test("out-of-range values are refused naming their key")
    func validation() {
        for (change, key) in [
            ({ (p: inout HedgingPolicy) in p.percentile = 1.2 }, "resilience.hedging.percentile"),
            ({ (p: inout HedgingPolicy) in p.window = 5 }, "resilience.hedging.window"),
            ({ (p: inout HedgingPolicy) in p.minimumSamples = 500 }, "resilience.hedging.minimumSamples"),
            ({ (p: inout HedgingPolicy) in p.maxExtraShare = 0.9 }, "resilience.hedging.maxExtraShare"),
            ({ (p: inout HedgingPolicy) in p.minimumDelay = .seconds(-1) }, "resilience.hedging.minimumDelayMs"),
        ] as [((inout HedgingPolicy) -> Void, String)] {
            var policy = HedgingPolicy()
            change(&policy)
            var resilience = Resilience()
            resilience.hedging = policy
            #expect(throws: ConfigurationError.self) { try resilience.validate() }
            do {
                try resilience.validate()
            } catch {
                #expect(error.key == key)
            }
        }
        #expect(throws: Never.self) { try HedgingPolicy().validate() }
    }

    @Test("hedging is read from a configuration file ({} takes the defaults); values out of range name their key")
    func configurationFile() throws {
        #expect(try loadConfiguration(#"{"resilience": {"hedging": {}}}"#).resilience.hedging == HedgingPolicy())
        let loaded = try loadConfiguration(
            #"{"resilience": {"hedging": {"percentile": 0.9, "window": 50, "minimumSamples": 10, "maxExtraShare": 0.1, "minimumDelayMs": 3}}}"#
        )
        let policy = try #require(loaded.resilience.hedging)
        #expect(policy.percentile == 0.9 && policy.window == 50 && policy.minimumSamples == 10)
        #expect(policy.maxExtraShare == 0.1 && policy.minimumDelay == .milliseconds(3))
        for (json, key) in [
            (#"{"resilience": {"hedging": {"percentile": 2}}}"#, "resilience.hedging.percentile"),
            (#"{"resilience": {"hedging": {"window": 2.5}}}"#, "resilience.hedging.window"),
            (#"{"resilience": {"hedging": {"minimumDelayMs": -1}}}"#, "resilience.hedging.minimumDelayMs"),
            (#"{"resilience": {"hedging": {"after": 3}}}"#, "resilience.hedging.after"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try loadConfiguration(json) }
            #expect(error?.key == key, "\(json)")
        }
    }
}
