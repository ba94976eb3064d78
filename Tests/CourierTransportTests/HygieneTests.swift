import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// A shut-down client leaves nothing behind: no file descriptor and no thread of its own. Each
/// transport runs in a process of its own (`CourierHygieneProbe`), because this test process's
/// descriptors and threads move with every test beside it.
@Suite("Resource hygiene: a shut-down client leaves no descriptor and no thread", .serialized, .timeLimit(.minutes(3)))
struct HygieneTests {
    static func probe() throws -> String {
        try #require(
            ChildProcess.sibling(named: "CourierHygieneProbe"),
            "build CourierHygieneProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
    }

    struct Report: Decodable {
        var descriptorsBefore: Int
        var leakedAfterShutdown: [String]
        var leakedAfterRelease: [String]
        var threadsBefore: [String]
        var threadsDuring: [String]
        var threadsAfter: [String]
    }

    /// Threads still running after the shutdown beyond those that ran before the client
    /// (libdispatch's pool left out: ``ProcessSnapshot/threadsBeyond(_:)``).
    static func leftover(_ report: Report) -> [String] {
        ProcessSnapshot(descriptors: [:], threads: report.threadsAfter)
            .threadsBeyond(ProcessSnapshot(descriptors: [:], threads: report.threadsBefore))
    }

    @Test(
        "after 200 calls (successes, 404s, streamed bodies, cancelled calls) and shutdown, descriptors and threads are back to the baseline",
        arguments: ConformanceTransport.all)
    func nothingLeftBehind(conformance: ConformanceTransport) async throws {
        try await withServer { server in
            let outcome = try await ChildProcess.run(
                try Self.probe(), [conformance.name, server.baseURL, "200"], timeout: .seconds(90))
            try #require(outcome.status == 0 && !outcome.timedOut, "probe failed: \(outcome.errors)")
            let report = try JSONDecoder().decode(Report.self, from: Data(outcome.output.utf8))
            if ProcessInfo.processInfo.environment["COURIER_HYGIENE_VERBOSE"] != nil { print("\(conformance.name): \(outcome.output)") }
            // URLSession's too: its shutdown waits until FoundationNetworking has freed the session,
            // which is when it closes its connections.
            #expect(report.leakedAfterShutdown.isEmpty, "\(conformance.name): \(report.leakedAfterShutdown)")
            #expect(report.leakedAfterRelease.isEmpty, "\(conformance.name): \(report.leakedAfterRelease)")
            #expect(Self.leftover(report).isEmpty, "\(conformance.name) left threads running: \(Self.leftover(report))")
            if conformance.name == "curl" {
                // The transport's own thread ran, and is gone: the check can see it.
                #expect(report.threadsDuring.contains("courier-curl") && !report.threadsAfter.contains("courier-curl"))
            }
        }
    }
}
