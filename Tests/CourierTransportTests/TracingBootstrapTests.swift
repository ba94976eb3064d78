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
            ChildProcess.sibling(named: "CourierTracingProbe"), "build CourierTracingProbe first: swift build --build-tests")
        let outcome = try await ChildProcess.run(probe, [transport], timeout: .seconds(60))
        #expect(outcome.status == 0 && !outcome.timedOut, "\(outcome.errors)")
        let line = try #require(outcome.output.split(separator: "\n").last, "no output: \(outcome.errors)")
        let report = try JSONDecoder().decode(Report.self, from: Data(line.utf8))
        #expect(report.clientSpans == 1, "spans: \(report.spans)")
        #expect(report.spans == ["HTTP GET"])
        let callSpanID = try #require(report.callSpanID)
        #expect(report.receivedSpanIDs == [callSpanID], "the server sees the call's span, once")
        #expect(report.traceparents.count == 1)
    }
}
