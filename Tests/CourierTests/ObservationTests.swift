import Courier
import CourierAlerts
import CourierMock
import Foundation
import Logging
import MetricsTestKit
import Testing

#if Tracing
    import CourierTracing
    import InMemoryTracing
#endif

@Suite("Timing, metrics and redaction")
struct ObservationTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path = "x"
        var query: [QueryItem] = []
        var headers: RequestHeaders = [:]
        var team: String? = "pay"
    }

    /// Moves the manual clock while the "network" runs.
    struct Elapse: Middleware {
        let time: ManualTimeSource
        let by: Duration
        func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
            -> TransportResponse
        {
            time.advance(by: by)
            return try await next(request, body, context)
        }
    }

    /// Keeps every record.
    final class Records: CallObserver {
        let all = Locked<[CallRecord]>([])
        func callFinished(_ record: CallRecord) { all.withLock { $0.append(record) } }
    }

    @Test("timings come from the injected clock: network vs decode vs total, without sleeping")
    func fakeClockTimings() async throws {
        let time = ManualTimeSource()
        let metrics = TestMetrics()
        let records = Records()
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = time
        configuration.exportsMetrics = false
        let client = try NetworkClient(
            configuration: configuration, transport: mock, networkMiddleware: [Elapse(time: time, by: .milliseconds(7))],
            observers: [records, MetricsExport(factory: metrics)])
        let response = try await client.response(for: Call())
        #expect(response.metrics.network == .milliseconds(7))
        #expect(response.metrics.decode == .zero)
        #expect(response.metrics.total == .milliseconds(7))
        #expect(response.metrics.attempts == 1)
        let record = try #require(records.all.withLock { $0 }.first)
        #expect(record.endpoint == "ObservationTests.Call")
        #expect(record.outcome == .success)
        #expect(record.host == "api.test")
        let timer = try metrics.expectTimer(
            "courier_call_duration", [("endpoint", "ObservationTests.Call"), ("transport", "mock"), ("outcome", "success")])
        #expect(timer.values == [7_000_000])
    }

    @Test("failures are counted by kind; cancellations are not errors; retries are counted")
    func errorCounters() async throws {
        let metrics = TestMetrics()
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503), .status(503), .status(503)])
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        var retry = RetryPolicy()
        retry.baseDelay = .milliseconds(1)
        retry.maxDelay = .milliseconds(1)
        configuration.retry = retry
        let client = try NetworkClient(configuration: configuration, transport: mock, observers: [MetricsExport(factory: metrics)])
        _ = try? await client.send(Call())
        let errors = try metrics.expectCounter(
            "courier_call_errors", [("endpoint", "ObservationTests.Call"), ("transport", "mock"), ("kind", "http_status")])
        #expect(errors.totalValue == 1)
        let retries = try metrics.expectCounter("courier_call_retries", [("endpoint", "ObservationTests.Call"), ("transport", "mock")])
        #expect(retries.totalValue == 2)
    }

    @Test("endpoint labels are bounded")
    func boundedLabels() {
        struct A {}
        struct B {}
        let labels = EndpointLabels(limit: 1)
        #expect(labels.label(for: A.self).hasSuffix("A"))
        #expect(labels.label(for: B.self) == EndpointLabels.overflowLabel)
        #expect(labels.label(for: A.self).hasSuffix("A"))
    }

    @Test("secrets appear in no log line, error description, alert or metric label")
    func redactionEverywhere() async throws {
        let secrets = ["AUTHSECRET", "COOKIESECRET", "QUERYSECRET", "INTERNALSECRET", "TEAMSECRET"]
        let handler = CapturingLogHandler()  // trace level: everything is logged
        let metrics = TestMetrics()
        let alertSink = FailureAlertsTests.Collector()
        let alerts = try FailureAlerts(
            rules: [AlertRule(name: "down", scope: .eachEndpoint, trigger: .consecutiveFailures(1), minimumInterval: .zero)],
            sink: alertSink)
        let spans = Self.recordedSpans()
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(500, body: Data("{\"error\":\"boom\"}".utf8)))
        mock.stub(.get, "/ok", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        configuration.secretHeaderNames = ["x-internal-token"]
        configuration.defaultHeaders = ["X-Internal-Token": "INTERNALSECRET"]
        configuration.headerRules = [try HeaderRule(team: "pay", headers: ["X-Team-Key": .fixed("TEAMSECRET")], secret: true)]
        configuration.exportsMetrics = false
        let client = try NetworkClient(
            configuration: configuration, transport: mock, middleware: spans.middleware,
            observers: [MetricsExport(factory: metrics), alerts])
        let call = Call(
            query: [QueryItem("access_token", "QUERYSECRET"), QueryItem("page", "2")],
            headers: ["Authorization": "Bearer AUTHSECRET", "Cookie": "session=COOKIESECRET"])
        let error = await #expect(throws: NetworkError.self) { try await client.send(call) }
        _ = try await client.send(Call(path: "ok", headers: ["Authorization": "Bearer AUTHSECRET"]))
        await alerts.shutdown()

        #expect(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("X-Team-Key")!] == "TEAMSECRET")  // sent, yet never shown
        var shown: [String] = handler.lines.map { "\($0.message) \($0.metadata)" }
        shown.append(String(describing: error))
        shown.append(error?.request?.description ?? "")
        shown += alertSink.alerts.withLock { $0 }.map { "\($0)" }
        shown += metrics.timers.map { "\($0.label) \($0.dimensions)" } + metrics.counters.map { "\($0.label) \($0.dimensions)" }
        shown += spans.shown()
        #if Tracing
            #expect(spans.shown().count == 2 && spans.shown().allSatisfy { $0.contains("url.full") })
        #endif
        #expect(handler.lines.contains { $0.message == "courier.call.started" })
        #expect(!alertSink.alerts.withLock { $0 }.isEmpty)
        for secret in secrets {
            let hits = shown.filter { $0.contains(secret) }
            #expect(hits.isEmpty, "\(secret) shown in \(hits)")
        }
        #expect(shown.contains { $0.contains("access_token=REDACTED") })
    }

    /// The tracing wing's middleware on a tracer that keeps its spans, where the wing is built (its
    /// trait), and what the spans show (names and attributes), so that they are checked for
    /// secrets too; nothing without it.
    static func recordedSpans() -> (middleware: [any Middleware], shown: () -> [String]) {
        #if Tracing
            let tracer = InMemoryTracer()
            return ([TracingMiddleware(tracer: tracer)], { tracer.finishedSpans.map { "\($0.operationName) \($0.attributes)" } })
        #else
            return ([], { [] })
        #endif
    }
}
