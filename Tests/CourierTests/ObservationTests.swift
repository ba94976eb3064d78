import Courier
import CourierAlerts
import CourierMock
import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing

@Suite("Timing, metrics, redaction and tracing")
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
            configuration: configuration, transport: mock, middleware: [TracingMiddleware()],
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
        #expect(handler.lines.contains { $0.message == "courier.call.started" })
        #expect(!alertSink.alerts.withLock { $0 }.isEmpty)
        for secret in secrets {
            let hits = shown.filter { $0.contains(secret) }
            #expect(hits.isEmpty, "\(secret) shown in \(hits)")
        }
        #expect(shown.contains { $0.contains("access_token=REDACTED") })
    }

    @Test("tracing: a client span with HTTP attributes, and a traceparent on the wire that continues the service's trace")
    func tracing() async throws {
        let tracer = InMemoryTracer()
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test:8443", transport: "mock"), transport: mock,
            middleware: [TracingMiddleware(tracer: tracer)])
        let incoming = try #require(TraceParent(header: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        var context = ServiceContext.topLevel
        context.traceParent = incoming
        await ServiceContext.withValue(context) {
            _ = try? await client.send(Call(query: [QueryItem("token", "T")]))
        }
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "api.test")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 8443)
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "https://api.test:8443/x?token=REDACTED")
        #expect(span.status?.code == .error)
        let sent = try #require(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("traceparent")!])
        let parsed = try #require(TraceParent(header: sent))
        #expect(parsed.traceID == incoming.traceID)
        #expect(parsed.parentID != incoming.parentID)
    }

    @Test("tracing: names and attributes follow the OpenTelemetry HTTP client conventions")
    func tracingConventions() async throws {
        let tracer = InMemoryTracer()
        let mock = MockTransport()
        mock.stub(.get, "/missing", .status(404))
        mock.stub(.get, "/flaky", responses: [.status(503), .status(200)])
        mock.stub(nil, "/purge", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        let client = try NetworkClient(
            configuration: configuration, transport: mock,
            middleware: [TracingMiddleware(tracer: tracer), RetryMiddleware(policy: RetryPolicy(), random: { 0 })])

        _ = try? await client.send(Call(path: "missing"))
        let missing = try #require(tracer.finishedSpans.last)
        #expect(missing.operationName == "GET")
        #expect(missing.attributes["error.type"]?.toSpanAttribute() == "404")
        #expect(missing.status?.code == .error)
        #expect(missing.attributes["http.request.resend_count"] == nil)

        _ = try await client.send(Call(path: "flaky"))
        let flaky = try #require(tracer.finishedSpans.last)
        #expect(flaky.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(flaky.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(flaky.attributes["error.type"] == nil)
        #expect(flaky.status == nil)

        _ = try await client.send(.init(rawValue: "PURGE")!, "purge", as: Data.self)
        let purge = try #require(tracer.finishedSpans.last)
        #expect(purge.operationName == "HTTP")
        #expect(purge.attributes["http.request.method"]?.toSpanAttribute() == "_OTHER")
        #expect(purge.attributes["http.request.method_original"]?.toSpanAttribute() == "PURGE")
    }

    @Test("tracing: a failure without an answer names its kind; a peer splits into address and port")
    func tracingFailureAndPeer() async throws {
        let tracer = InMemoryTracer()
        let mock = MockTransport()
        mock.stub(.get, "/down", .failure(NetworkError(kind: .connectFailure, phase: .connect, message: "refused")))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        let client = try NetworkClient(configuration: configuration, transport: mock, middleware: [TracingMiddleware(tracer: tracer)])
        _ = try? await client.send(Call(path: "down"))
        let span = try #require(tracer.finishedSpans.last)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "connect_failure")
        #expect(span.attributes["http.response.status_code"] == nil)
        #expect(span.status?.code == .error)

        #expect(TracingMiddleware.addressAndPort("127.0.0.1:8080") == ("127.0.0.1", 8080))
        #expect(TracingMiddleware.addressAndPort("[::1]:443") == ("::1", 443))
        #expect(TracingMiddleware.addressAndPort("::1") == ("::1", nil))
        #expect(TracingMiddleware.addressAndPort("10.0.0.1") == ("10.0.0.1", nil))
    }

    /// Starts a span of its own from the current service context, as instrumented code below
    /// Courier's span would.
    struct ChildSpanMiddleware: Middleware {
        let tracer: InMemoryTracer

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            let span = tracer.startSpan("below", context: ServiceContext.current ?? .topLevel)
            defer { span.end() }
            return try await next(request, body, context)
        }
    }

    @Test("tracing: the client span is the current context for the middleware below it")
    func tracingSpanIsCurrentBelow() async throws {
        let tracer = InMemoryTracer()
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(200))
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", transport: "mock"), transport: mock,
            middleware: [TracingMiddleware(tracer: tracer), ChildSpanMiddleware(tracer: tracer)])
        _ = try await client.send(Call(query: []))
        let spans = tracer.finishedSpans
        let courier = try #require(spans.first { $0.operationName == "GET" })
        let below = try #require(spans.first { $0.operationName == "below" })
        #expect(below.parentSpanID == courier.spanID)
        #expect(below.traceID == courier.traceID)
    }

    @Test(
        "traceparent parsing follows the W3C rules",
        arguments: [
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true),
        ])
    func traceParentParsing(header: String, valid: Bool) {
        let parsed = TraceParent(header: header)
        #expect((parsed != nil) == valid)
        if valid, header.hasPrefix("00") { #expect(parsed?.description == header) }
    }
}
