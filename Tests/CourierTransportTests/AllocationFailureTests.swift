import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// libcurl's allocations failed one at a time, as curl's torture tests do: every call still ends
/// with a response or a typed error, no transfer is left alive, the client works afterwards, and
/// nothing libcurl allocated is left once it shuts down. In a process of its own
/// (`CourierAllocationProbe`), because libcurl takes its allocator once per process.
@Suite("libcurl running out of memory at every allocation", .serialized, .timeLimit(.minutes(5)))
struct AllocationFailureTests {
    struct Report: Decodable {
        var rounds: Int
        var failuresInjected: Int
        var outcomes: [String: Int]
        var finalOK: Bool
        var liveTransfers: Int
        var outstandingBefore: Int
        var outstandingAfter: Int
        /// Rounds whose failed allocation left a transfer stuck until its deadline.
        var timedOutRounds: [Int]
    }

    @Test("every allocation of four kinds of call fails in turn; each call ends typed, nothing leaks, the client recovers")
    func everyAllocationFails() async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierAllocationProbe"),
            "build CourierAllocationProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        try await withServer { server in
            let outcome = try await ChildProcess.run(probe, [server.baseURL, "2000"], timeout: .seconds(240))
            try #require(outcome.status == 0 && !outcome.timedOut, "probe failed (\(outcome.status)): \(outcome.errors)")
            let report = try JSONDecoder().decode(Report.self, from: Data(outcome.output.utf8))
            if ProcessInfo.processInfo.environment["COURIER_TORTURE_VERBOSE"] != nil { print(outcome.output) }
            // It ran until the four calls allocated less than the round's number, failing one each round.
            #expect(report.rounds < 2000, "the run never got past the calls' allocations: \(report.rounds) rounds")
            #expect(report.failuresInjected >= report.rounds - 3)
            #expect(report.outcomes["untyped"] == nil)
            // A few failed allocations inside the multi handle leave a transfer stuck; the deadline
            // ends it, as a typed timeout. Any more than a handful would be a new problem.
            #expect(report.timedOutRounds.count <= 8, "rounds stuck until the deadline: \(report.timedOutRounds)")
            #expect(report.outcomes["out_of_memory", default: 0] + report.outcomes["transport_failure", default: 0] > 0)
            #expect(report.finalOK)
            #expect(report.liveTransfers == 0)
            #expect(
                report.outstandingAfter <= report.outstandingBefore,
                "libcurl holds \(report.outstandingAfter - report.outstandingBefore) more blocks")
        }
    }
}
