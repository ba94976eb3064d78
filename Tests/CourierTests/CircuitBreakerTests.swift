import CourierAlerts
import CourierMock
import CourierTestSupport
import Foundation
import MetricsTestKit
import Testing

@testable import Courier
@testable import CourierResilience

@Suite("Circuit breaker")
struct CircuitBreakerTests {
    struct Call: Endpoint {
        typealias Output = Data
        var baseURL: String? = nil
        var path = "x"
    }

    static let second: Int64 = 1_000_000_000

    static func client(
        _ mock: MockTransport, clock: ManualTimeSource, middleware: [any Middleware] = [],
        _ change: (inout CircuitBreakerPolicy) -> Void = { _ in }
    ) throws -> NetworkClient {
        var policy = CircuitBreakerPolicy()
        change(&policy)
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.timeSource = clock
        configuration.exportsMetrics = false
        configuration.resilience.circuitBreaker = policy
        return try NetworkClient(configuration: configuration, transport: mock, middleware: middleware)
    }

    // MARK: The state machine, without I/O

    @Test("closed → open after N failures in a row; a success in between starts the count again")
    func consecutive() {
        var policy = CircuitBreakerPolicy()
        policy.consecutiveFailures = 3
        let width = RateWindow.sliceWidth(of: policy.window)
        var circuit = Circuit()
        for outcome in [Circuit.Outcome.failure, .failure, .success, .failure, .failure] {
            #expect(circuit.admit(now: 0).0 == .pass)
            #expect(circuit.record(outcome, probe: false, now: 0, policy: policy, sliceWidth: width) == nil)
        }
        #expect(circuit.record(.failure, probe: false, now: 0, policy: policy, sliceWidth: width) == .opened)
        #expect(circuit.publicState == .open)
    }

    @Test("the failure ratio opens the circuit only once the window holds the minimum of calls")
    func ratio() {
        var policy = CircuitBreakerPolicy()
        policy.consecutiveFailures = 1000
        policy.failureRatio = 0.5
        policy.minimumCalls = 10
        let width = RateWindow.sliceWidth(of: policy.window)
        var circuit = Circuit()
        // Alternating: never two failures in a row, half of the calls failed.
        var transitions: [Circuit.Transition?] = []
        for index in 0..<10 {
            transitions.append(
                circuit.record(index % 2 == 0 ? .success : .failure, probe: false, now: 0, policy: policy, sliceWidth: width))
        }
        #expect(transitions.dropLast().allSatisfy { $0 == nil }, "fewer than 10 calls: no verdict")
        #expect(transitions.last == .opened, "the tenth call: 5 of 10 failed")
    }

    @Test("open: refused until the open duration passes; then one probe at a time; its result decides")
    func halfOpen() {
        var policy = CircuitBreakerPolicy()
        policy.consecutiveFailures = 1
        policy.openDuration = .seconds(5)
        let width = RateWindow.sliceWidth(of: policy.window)
        var circuit = Circuit()
        #expect(circuit.record(.failure, probe: false, now: 0, policy: policy, sliceWidth: width) == .opened)
        #expect(circuit.admit(now: 2 * Self.second).0 == .refuse(waitNanoseconds: 3 * Self.second))
        #expect(circuit.admit(now: 5 * Self.second) == (.probe, .halfOpened))
        #expect(circuit.admit(now: 5 * Self.second).0 == .refuse(waitNanoseconds: 0), "one probe at a time")
        // A probe that ends with neither success nor failure (cancelled) frees the place.
        #expect(circuit.record(.neutral, probe: true, now: 5 * Self.second, policy: policy, sliceWidth: width) == nil)
        #expect(circuit.admit(now: 5 * Self.second) == (.probe, nil))
        #expect(circuit.record(.failure, probe: true, now: 6 * Self.second, policy: policy, sliceWidth: width) == .opened)
        #expect(circuit.admit(now: 10 * Self.second).0 == .refuse(waitNanoseconds: Self.second), "open again for the whole duration")
        #expect(circuit.admit(now: 11 * Self.second) == (.probe, .halfOpened))
        #expect(circuit.record(.success, probe: true, now: 11 * Self.second, policy: policy, sliceWidth: width) == .closed)
        #expect(circuit.admit(now: 11 * Self.second).0 == .pass)
    }

    @Test("attempts admitted before the circuit opened change nothing when they end")
    func lateResults() {
        var policy = CircuitBreakerPolicy()
        policy.consecutiveFailures = 1
        let width = RateWindow.sliceWidth(of: policy.window)
        var circuit = Circuit()
        #expect(circuit.record(.failure, probe: false, now: 0, policy: policy, sliceWidth: width) == .opened)
        #expect(circuit.record(.success, probe: false, now: 0, policy: policy, sliceWidth: width) == nil)
        #expect(circuit.publicState == .open)
    }

    @Test("transitions are counted in swift-metrics by host and state")
    func transitionsExported() {
        let metrics = TestMetrics()
        var policy = CircuitBreakerPolicy()
        policy.consecutiveFailures = 1
        let breaker = CircuitBreaker(policy: policy, exports: true, metrics: metrics)
        _ = breaker.admit(host: "a.test", now: 0)
        #expect(breaker.record(.failure, probe: false, host: "a.test", now: 0) == .opened)
        _ = breaker.admit(host: "a.test", now: 10 * Self.second)
        _ = breaker.record(.success, probe: true, host: "a.test", now: 10 * Self.second)
        for state in ["open", "half_open", "closed"] {
            let counter = try? metrics.expectCounter("courier_circuit_transitions", [("host", "a.test"), ("state", state)])
            #expect(counter?.totalValue == 1, "\(state)")
        }
    }

    // MARK: Through the client

    @Test("a failing host: the circuit opens, calls fail fast with nothing sent, a probe after the open duration closes it")
    func throughClient() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503), .status(503), .status(503), .status(200, body: Data("ok".utf8))])
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock) {
            $0.consecutiveFailures = 3
            $0.openDuration = .seconds(5)
        }
        #expect(client.linkOrder.contains("CircuitBreakerLink"))
        for _ in 0..<3 { _ = await expectNetworkError(.httpStatus) { try await client.send(Call()) } }
        #expect(client.circuitStates == ["a.test": .open])
        let refused = await expectNetworkError(.circuitOpen) { try await client.send(Call()) }
        #expect(refused?.phase == .building)
        #expect(refused?.message.contains("a.test") == true)
        #expect(mock.recordedRequests.count == 3, "nothing was sent while open")
        clock.advance(by: .seconds(5))
        let probe = try await client.response(for: Call())
        #expect(probe.value == Data("ok".utf8))
        #expect(client.circuitStates == ["a.test": .closed])
        #expect(mock.recordedRequests.count == 4)
    }

    @Test("retry does not repeat a call the open circuit refused")
    func notRetried() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        var retry = RetryPolicy()
        retry.maxAttempts = 5
        // Retry above the breaker, as the configuration places it, with no wait between attempts.
        let client = try Self.client(mock, clock: ManualTimeSource(), middleware: [RetryMiddleware(policy: retry, random: { 0 })]) {
            $0.consecutiveFailures = 2
        }
        let error = await expectNetworkError(.circuitOpen) { try await client.send(Call()) }
        #expect(error?.metrics?.attempts == 2)
        #expect(mock.recordedRequests.count == 2, "two failures opened it; the third attempt was refused, not sent")
    }

    @Test("statuses outside the failing set, and cancellations, are not the host's failures")
    func notFailures() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(404))
        let client = try Self.client(mock, clock: ManualTimeSource()) { $0.consecutiveFailures = 2 }
        for _ in 0..<5 { _ = await expectNetworkError(.httpStatus) { try await client.send(Call()) } }
        #expect(client.circuitStates == ["a.test": .closed])
    }

    @Test("each host has its own circuit")
    func perHost() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let client = try Self.client(mock, clock: ManualTimeSource()) { $0.consecutiveFailures = 1 }
        _ = try? await client.send(Call())
        _ = await expectNetworkError(.circuitOpen) { try await client.send(Call()) }
        _ = await expectNetworkError(.httpStatus) { try await client.send(Call(baseURL: "https://b.test:8443")) }
        #expect(client.circuitStates == ["a.test": .open, "b.test:8443": .open])
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("no breaker unless configured: the chain has no link for it")
    func offByDefault() throws {
        let configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        #expect(configuration.resilience.circuitBreaker == nil)
        let client = try NetworkClient(configuration: configuration, transport: MockTransport())
        #expect(!client.linkOrder.contains("CircuitBreakerLink"))
        #expect(client.circuitStates.isEmpty)
    }

    @Test("the breaker is read from a configuration file ({} takes the defaults); values out of range name their key")
    func configuration() throws {
        let load = loadConfiguration
        #expect(try load(#"{"resilience": {"circuitBreaker": {}}}"#).resilience.circuitBreaker == CircuitBreakerPolicy())
        #expect(try load(#"{"resilience": {"deadlineHeader": "X-Timeout-Ms"}}"#).resilience.deadlineHeader == "X-Timeout-Ms")
        let loaded = try load(
            #"{"resilience": {"circuitBreaker": {"consecutiveFailures": 2, "failureRatio": 0.25, "minimumCalls": 8, "window": 60, "openDuration": 0.5, "statuses": [503]}}}"#
        )
        let policy = try #require(loaded.resilience.circuitBreaker)
        #expect(policy.consecutiveFailures == 2 && policy.failureRatio == 0.25 && policy.minimumCalls == 8)
        #expect(policy.window == .seconds(60) && policy.openDuration == .milliseconds(500) && policy.failingStatuses == [503])
        for (json, key) in [
            (#"{"resilience": {"circuitBreaker": {"consecutiveFailures": 0}}}"#, "resilience.circuitBreaker.consecutiveFailures"),
            (#"{"resilience": {"circuitBreaker": {"failureRatio": 0}}}"#, "resilience.circuitBreaker.failureRatio"),
            (#"{"resilience": {"circuitBreaker": {"minimumCalls": 1.5}}}"#, "resilience.circuitBreaker.minimumCalls"),
            (#"{"resilience": {"circuitBreaker": {"openDuration": 0.01}}}"#, "resilience.circuitBreaker.openDuration"),
            (#"{"resilience": {"circuitBreaker": {"statuses": [700]}}}"#, "resilience.circuitBreaker.statuses"),
            (#"{"resilience": {"circuitBreaker": {"threshold": 3}}}"#, "resilience.circuitBreaker.threshold"),
            (#"{"resilience": {"deadlineHeader": "Content-Length"}}"#, "resilience.deadlineHeader"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try load(json) }
            #expect(error?.key == key, "\(json)")
        }
    }

    @Test("failure alerts can watch the breaker: a rule on circuit_open trips when it refuses a call and recovers after it closes")
    func alertsWatchTheBreaker() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503), .status(503), .status(503), .status(503), .status(503), .status(200)])
        let clock = ManualTimeSource()
        let sink = FailureAlertsTests.Collector()
        let alerts = try FailureAlerts(
            rules: [
                AlertRule(
                    name: "breaker", scope: .eachEndpoint, trigger: .consecutiveFailures(1), failures: [.circuitOpen],
                    minimumInterval: .zero)
            ], sink: sink, timeSource: clock)
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.timeSource = clock
        configuration.exportsMetrics = false
        configuration.resilience.circuitBreaker = CircuitBreakerPolicy()
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [alerts])
        struct Call: Endpoint {
            typealias Output = Data
            var path: String { "x" }
        }
        for _ in 0..<5 { _ = try? await client.send(Call()) }  // five 503s in a row open the circuit
        let refused = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
        #expect(refused?.kind == .circuitOpen)
        #expect(CallOutcome(error: refused) == .circuitOpen)
        clock.advance(by: .seconds(5))  // the open period ends: the next call is the probe
        _ = try await client.send(Call())
        await alerts.shutdown()
        let received = sink.alerts.withLock { $0 }
        #expect(received.map(\.kind) == [.tripped, .recovered])
        #expect(received.first?.lastError == "circuit_open")
        await client.shutdown()
    }
}
