import Courier
import CourierConformance
import CourierResilience
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The retry budget and the circuit breaker over every transport, checked against what the
/// loopback server saw. Time is a `ManualTimeSource`: the breaker's open duration passes when the
/// test advances it, and retries wait nothing (their jitter is 0).
@Suite("Resilience over real transports")
struct ResilienceOverTransportTests {
    @Test(
        "the circuit opens on 503s and on refused connections, nothing reaches the server while open, a probe closes it",
        arguments: ConformanceTransport.all)
    func breaker(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try transport.makeClient(server) { configuration in
                configuration.timeSource = clock
                var policy = CircuitBreakerPolicy()
                policy.consecutiveFailures = 2
                policy.openDuration = .seconds(5)
                configuration.resilience.circuitBreaker = policy
            }
            for _ in 0..<2 { _ = await expectNetworkError(.httpStatus) { try await client.send(RawEndpoint(path: "status/503")) } }
            let refused = await expectNetworkError(.circuitOpen) { try await client.send(RawEndpoint(path: "status/200")) }
            #expect(refused?.metrics?.attempts == 0)
            #expect(server.requestCount == 2, "the refused call never reached the server")
            #expect(client.circuitStates.values.first == .open)
            clock.advance(by: .seconds(5))
            _ = try await client.send(RawEndpoint(path: "status/200"))
            #expect(server.requestCount == 3)
            #expect(client.circuitStates.values.first == .closed)
            await client.shutdown()
        }

        // A host that refuses connections opens its circuit the same way.
        // (A held port that never listens: a shut-down server's port can be taken by a server that
        // a test running beside this one starts.)
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let client = try transport.makeClient(baseURL: refusing.baseURL) { configuration in
            configuration.requestTimeout = .seconds(10)
            var policy = CircuitBreakerPolicy()
            policy.consecutiveFailures = 2
            configuration.resilience.circuitBreaker = policy
        }
        for _ in 0..<2 { _ = await expectNetworkError(.connectFailure) { try await client.send(RawEndpoint(path: "echo")) } }
        _ = await expectNetworkError(.circuitOpen) { try await client.send(RawEndpoint(path: "echo")) }
        await client.shutdown()
    }

    @Test("the retry budget caps the retries a failing server receives", arguments: ConformanceTransport.all)
    func budget(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            var budget = RetryBudget()
            budget.share = 0
            budget.minPerSecond = 1
            budget.window = .seconds(2)
            let retry = RetryMiddleware(policy: RetryPolicy(), budget: budget, random: { 0 })
            let client = try transport.makeClient(server, middleware: [retry]) { $0.timeSource = ManualTimeSource() }
            for _ in 0..<5 {
                let error = await expectNetworkError(.httpStatus) { try await client.send(RawEndpoint(path: "status/503")) }
                #expect(error?.status == 503)
            }
            // Without the budget: 15 requests. With it: two retries (1 a second over 2 s), then none.
            #expect(server.requestCount == 5 + 2)
            await client.shutdown()
        }
    }
}
