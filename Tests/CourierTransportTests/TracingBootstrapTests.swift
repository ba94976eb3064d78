import CourierTestServer
import Foundation
import Testing

/// With a tracer bootstrapped for the whole process, as a service does it, and `TracingMiddleware()`
/// without a tracer of its own: each call still gets one client span, whichever transport runs it.
/// AsyncHTTPClient 1.37 would start a second span with the bootstrapped tracer; the adapter turns
/// that off. The bootstrap is process-wide and once only, so each case runs `CourierTracingProbe`
/// in a process of its own.
@Suite("Tracing with a bootstrapped tracer")
struct TracingBootstrapTests {
    struct Report: Decodable {
        var spans: [String]
        var clientSpans: Int
        var receivedSpanIDs: [String]
        var callSpanID: String?
        var traceparents: [String]
    }

    static var transports: [String] {
        #if AsyncHTTPClient
            ["curl", "urlsession", "ahc"]
        #else
            ["curl", "urlsession"]
        #endif
    }

    @Test("one client span per call, and its id on the wire once", arguments: transports)
    func oneSpan(transport: String) async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierTracingProbe"),
            "build CourierTracingProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        let outcome = try await ChildProcess.run(probe, [transport], timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.timedOut, "\(outcome.errors)")
        let line = try #require(outcome.output.split(separator: "\n").last, "no output: \(outcome.errors)")
        let report = try JSONDecoder().decode(Report.self, from: Data(line.utf8))
        #expect(report.clientSpans == 1, "spans: \(report.spans)")
        #expect(report.spans == ["GET"])
        let callSpanID = try #require(report.callSpanID)
        #expect(report.receivedSpanIDs == [callSpanID], "the server sees the call's span, once")
        #expect(report.traceparents.count == 1)
    }
}

/// A new service bootstraps swift-log and makes a client without naming a logger: a failing call
/// prints one `warning` line, its request redacted (the bootstrap is process-wide, so the call runs
/// in `CourierTracingProbe logging`).
@Suite("Logging with a bootstrapped backend")
struct LoggingBootstrapTests {
    @Test("a failing call prints one redacted warning through the service's logging backend")
    func oneWarning() async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierTracingProbe"),
            "build CourierTracingProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        let outcome = try await ChildProcess.run(probe, ["logging"], timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.timedOut, "\(outcome.errors)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let failures = lines.filter { $0.contains("courier.call.failed") }
        #expect(failures.count == 1, "\(lines)")
        let line = try #require(failures.first)
        #expect(line.contains("warning"), "\(line)")
        #expect(line.contains("courier.status=500"), "\(line)")
        #expect(line.contains("access_token=REDACTED"), "\(line)")
        for secret in ["query-secret-7", "header-secret-7"] {
            #expect(!outcome.output.contains(secret) && !outcome.errors.contains(secret), "\(secret) was printed")
        }
    }
}
