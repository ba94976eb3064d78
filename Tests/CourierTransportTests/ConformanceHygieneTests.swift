import CourierConformance
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// After every conformance case, the process is back where it was: no file descriptor and no
/// thread left behind by the case's client, server or calls. The cases run one at a time, for one
/// transport at a time, in a child process of their own (``IsolatedSuiteTests``), so nothing else
/// moves the process's descriptors and threads meanwhile.
@Suite(
    "Resource hygiene after each conformance case", .serialized, .timeLimit(.minutes(10)),
    .enabled(
        if: IsolatedSuite.hygiene.runsHere,
        "runs in a child process of its own (IsolatedSuiteTests); alone: COURIER_DEVELOPMENT=1 COURIER_ISOLATED_SUITE=ConformanceHygieneTests swift test --filter ConformanceHygieneTests"
    ))
struct ConformanceHygieneTests {
    /// One case, named as its test is.
    struct Case: Sendable {
        var name: String
        var run: @Sendable (ConformanceTransport) async throws -> Void
    }

    /// The cases on the injected clock or fast real ones (the real-clock stall and connect cases
    /// are left out: they wait seconds by design), with one argument where a case takes several.
    static let cases: [Case] = [
        Case(name: "getWithQueryAndHeaders") { try await ConformanceCases.getWithQueryAndHeaders($0) },
        Case(name: "postBodies(json)") { try await ConformanceCases.postBodies($0, bodyKind: "json") },
        Case(name: "multipart") { try await ConformanceCases.multipart($0) },
        Case(name: "multipartMissingFile") { try await ConformanceCases.multipartMissingFile($0) },
        Case(name: "statusErrors(503)") { try await ConformanceCases.statusErrors($0, code: 503) },
        Case(name: "invalidHeaders") { try await ConformanceCases.invalidHeaders($0, header: (name: "X-Bad", value: "a\r\nb")) },
        Case(name: "cancelMidResponse") { try await ConformanceCases.cancelMidResponse($0) },
        Case(name: "timeout") { try await ConformanceCases.timeout($0) },
        Case(name: "timeoutWhileReceiving") { try await ConformanceCases.timeoutWhileReceiving($0) },
        Case(name: "connectionRefused") { try await ConformanceCases.connectionRefused($0) },
        Case(name: "dnsFailure") { try await ConformanceCases.dnsFailure($0) },
        Case(name: "largeDownload") { try await ConformanceCases.largeDownload($0) },
        Case(name: "redirects") { try await ConformanceCases.redirects($0) },
        Case(name: "redirectCrossOrigin(307)") { try await ConformanceCases.redirectCrossOrigin($0, status: 307) },
        Case(name: "redirectRefused") { try await ConformanceCases.redirectRefused($0) },
        Case(name: "redirectMalformedLocation") { try await ConformanceCases.redirectMalformedLocation($0) },
        Case(name: "method(HEAD)") { try await ConformanceCases.method($0, method: .head) },
        Case(name: "successAndBodylessStatuses(204)") { try await ConformanceCases.successAndBodylessStatuses($0, code: 204) },
        Case(name: "responseHeaders") { try await ConformanceCases.responseHeaders($0) },
        Case(name: "smallAndChunkedBodies") { try await ConformanceCases.smallAndChunkedBodies($0) },
        Case(name: "concurrentCalls") { try await ConformanceCases.concurrentCalls($0) },
        Case(name: "cancelBeforeAndAfter") { try await ConformanceCases.cancelBeforeAndAfter($0) },
        Case(name: "decompression(gzip)") { try await ConformanceCases.decompression($0, encoded: .gzip) },
        Case(name: "decompression(truncated)") { try await ConformanceCases.decompression($0, encoded: .truncated) },
        Case(name: "decompressionOptOut") { try await ConformanceCases.decompressionOptOut($0) },
        Case(name: "fault(truncatedBody)") { try await ConformanceCases.fault($0, fault: .truncatedBody) },
        Case(name: "fault(resetMidBody)") { try await ConformanceCases.fault($0, fault: .resetMidBody) },
        Case(name: "cleartextHTTP2") { try await ConformanceCases.cleartextHTTP2($0) },
        Case(name: "streamedUpload(chunked)") { try await ConformanceCases.streamedUpload($0, announced: false) },
        Case(name: "streamedUploadBreaksLength") { try await ConformanceCases.streamedUploadBreaksLength($0, surplus: 10) },
        Case(name: "streamedDownload") { try await ConformanceCases.streamedDownload($0) },
        Case(name: "streamedCancel") { try await ConformanceCases.streamedCancel($0) },
        Case(name: "streamedDeadline") { try await ConformanceCases.streamedDeadline($0) },
    ]

    @Test("each case leaves no descriptor and no thread behind", .serialized, arguments: ConformanceTransport.all)
    func eachCaseCleansUp(transport: ConformanceTransport) async throws {
        // The first case once, so that what the process sets up once (libcurl's global state,
        // libdispatch's timer, NIO's singletons) exists before the baseline.
        try await Self.cases[0].run(transport)
        let baseline = try await ProcessSnapshot.settled(towards: ProcessSnapshot.now())
        for testCase in Self.cases {
            try await testCase.run(transport)
            let left = try await ProcessSnapshot.settled(towards: baseline).beyond(baseline)
            if ProcessInfo.processInfo.environment["COURIER_HYGIENE_VERBOSE"] != nil {
                print("\(transport.name) \(testCase.name): \(ProcessSnapshot.now().descriptors.count) descriptors, left \(left)")
            }
            #expect(left.isEmpty, "\(transport.name) \(testCase.name) left: \(left)")
        }
    }
}
