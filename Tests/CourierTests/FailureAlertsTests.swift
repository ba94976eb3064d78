import Courier
import CourierAlerts
import CourierMock
import Foundation
import Testing

@Suite("Failure alerts")
struct FailureAlertsTests {
    /// Collects alerts; `await next(count)` waits (bounded) for them.
    final class Collector: AlertSink {
        let alerts = Locked<[Alert]>([])
        func deliver(_ alert: Alert) async { alerts.withLock { $0.append(alert) } }
    }

    static func record(_ outcome: CallOutcome, endpoint: String = "GetUser", team: String? = "pay", id: String = "r") -> CallRecord {
        let error: NetworkError? =
            switch outcome {
            case .success: nil
            case .serverError: NetworkError(kind: .httpStatus, phase: .validating, message: "500", status: 500)
            case .clientError: NetworkError(kind: .httpStatus, phase: .validating, message: "404", status: 404)
            case .cancelled: NetworkError.cancelled(phase: .sending)
            case .timeout: NetworkError(kind: .timedOut, phase: .connect, message: "slow")
            default: NetworkError(kind: .connectFailure, phase: .connect, message: "refused")
            }
        return CallRecord(
            requestID: id, endpoint: endpoint, team: team, method: "GET", host: "api.test", status: error?.status, error: error,
            metrics: RequestMetrics(transport: "mock"))
    }

    @Test("N consecutive failures trip once (deduplicated), a success recovers")
    func consecutive() async throws {
        let sink = Collector()
        let alerts = try FailureAlerts(
            rules: [AlertRule(name: "down", scope: .team("pay"), trigger: .consecutiveFailures(3), minimumInterval: .zero)], sink: sink)
        for index in 0..<2 { alerts.callFinished(Self.record(.serverError, id: "a\(index)")) }
        alerts.callFinished(Self.record(.success))  // resets the streak
        for index in 0..<6 { alerts.callFinished(Self.record(.transport, id: "b\(index)")) }
        alerts.callFinished(Self.record(.cancelled))  // not counted
        alerts.callFinished(Self.record(.clientError))  // not a failure by default: recovers
        alerts.callFinished(Self.record(.serverError, team: "other"))  // another team: not watched
        await alerts.shutdown()
        let received = sink.alerts.withLock { $0 }
        #expect(received.map(\.kind) == [.tripped, .recovered])
        #expect(received.first?.failures == 3)
        #expect(received.first?.sampleRequestID == "b2")
        #expect(received.first?.lastError == "connect_failure")
        #expect(received.first?.team == "pay")
    }

    @Test("error rate over a sliding window, with a minimum of calls, on a fake clock")
    func errorRate() async throws {
        let time = ManualTimeSource()
        let sink = Collector()
        let rule = AlertRule(
            name: "rate", scope: .eachEndpoint, trigger: .errorRate(threshold: 0.5, window: .seconds(10), minimumCalls: 4),
            minimumInterval: .zero)
        let alerts = try FailureAlerts(rules: [rule], sink: sink, timeSource: time)
        // Three failures: below the minimum number of calls (no alert: the first one received,
        // checked below, counts four calls).
        for _ in 0..<3 { alerts.callFinished(Self.record(.timeout)) }
        alerts.callFinished(Self.record(.success))  // 3/4 = 75%: trips
        alerts.callFinished(Self.record(.timeout, endpoint: "Other"))  // another group
        time.advance(by: .seconds(11))  // the window empties
        for _ in 0..<4 { alerts.callFinished(Self.record(.success)) }  // 0/4: recovers
        await alerts.shutdown()
        let received = sink.alerts.withLock { $0 }
        #expect(received.map(\.kind) == [.tripped, .recovered])
        #expect(received.first.map { ($0.failures, $0.calls, $0.group) } ?? (0, 0, "") == (3, 4, "GetUser"))
    }

    @Test("trips are rate-limited per rule and group; a suppressed trip sends no recovery")
    func rateLimit() async throws {
        let time = ManualTimeSource()
        let sink = Collector()
        let alerts = try FailureAlerts(
            rules: [AlertRule(name: "down", scope: .eachTeam, trigger: .consecutiveFailures(1), minimumInterval: .seconds(60))], sink: sink,
            timeSource: time)
        alerts.callFinished(Self.record(.transport))  // trip (sent)
        alerts.callFinished(Self.record(.success))  // recovery (sent)
        alerts.callFinished(Self.record(.transport))  // trip within a minute: suppressed
        alerts.callFinished(Self.record(.success))  // its recovery: suppressed
        time.advance(by: .seconds(61))
        alerts.callFinished(Self.record(.transport))  // sent again
        await alerts.shutdown()
        #expect(sink.alerts.withLock { $0 }.map(\.kind) == [.tripped, .recovered, .tripped])
    }

    @Test("a slow sink never delays calls; a full buffer drops alerts and counts them")
    func slowSink() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let sink = ClosureAlertSink { _ in for await _ in gate.stream { return } }
        let alerts = try FailureAlerts(
            rules: [AlertRule(name: "down", scope: .eachEndpoint, trigger: .consecutiveFailures(1), minimumInterval: .zero)], sink: sink)
        let mock = MockTransport()
        let count = Locked(0)
        mock.stub(.get, "/x") { _ in
            count.withLock { count -> MockResponse in
                count += 1
                return count % 2 == 1 ? .status(500) : .status(200)
            }
        }
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [alerts])
        struct Call: Endpoint {
            typealias Output = Data
            var path: String { "x" }
        }
        // 600 trips and recoveries while the sink is stuck: every call still returns.
        for _ in 0..<300 {
            await #expect(throws: NetworkError.self) { try await client.send(Call()) }
            _ = try await client.send(Call())
        }
        #expect(alerts.droppedAlerts > 0)
        gate.continuation.finish()
        await alerts.shutdown()
    }

    @Test(
        "invalid rules are refused",
        arguments: [
            AlertRule.Trigger.consecutiveFailures(0), .errorRate(threshold: 0, window: .seconds(1), minimumCalls: 1),
            .errorRate(threshold: 0.5, window: .zero, minimumCalls: 1), .errorRate(threshold: 1.5, window: .seconds(1), minimumCalls: 1),
        ])
    func invalid(trigger: AlertRule.Trigger) {
        #expect(throws: ConfigurationError.self) {
            try FailureAlerts(rules: [AlertRule(name: "x", scope: .eachEndpoint, trigger: trigger)], sink: ClosureAlertSink { _ in })
        }
    }
}
