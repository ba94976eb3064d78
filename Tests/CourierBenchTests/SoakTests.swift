import ArgumentParser
import Foundation
import Testing

@testable import CourierBenchKit

@Suite("courier-bench soak: its invariants and its options")
struct SoakTests {
    static let clean = SoakReport(
        transport: "curl", calls: 10, faultRate: 0.2, seconds: 1, started: 10, completed: 10, succeeded: 8,
        failed: ["timed_out": 2], failureExamples: [:], completedTwice: 0, lost: 0, deduplicated: 1, retried: 2,
        serverRequests: 12, serverConnections: 3, serverFaults: ["reset": 2], unkeyedPOSTDuplicates: 0, keyedPOSTRepeats: 1,
        descriptorsAtStart: 12, descriptorsAtEnd: 12, descriptorsLeft: [], threadsLeft: [], transfersLeft: 0, rssAtStartKiB: 1,
        rssAtEndKiB: 1, problems: [])

    @Test("a clean run has no problems")
    func clean() {
        #expect(SoakRun.problems(in: Self.clean).isEmpty)
        #expect(SoakRun.describe(Self.clean).hasSuffix("PASS"))
    }

    @Test("each broken invariant is named", arguments: ["twice", "lost", "duplicate"])
    func broken(invariant: String) {
        var report = Self.clean
        let words: String
        switch invariant {
        case "twice": (report.completedTwice, words) = (1, "completions ran a second time")
        case "lost": (report.lost, words) = (1, "calls never completed")
        default: (report.unkeyedPOSTDuplicates, words) = (1, "without an idempotency key reached the server twice")
        }
        let problems = SoakRun.problems(in: report)
        #expect(problems.count == 1)
        #expect(problems.first?.contains(words) == true)
    }

    @Test("a descriptor left open, a thread, a curl transfer and a call that never started are problems")
    func leftOpen() {
        var report = Self.clean
        report.descriptorsLeft = ["13 → socket:[123]"]
        report.threadsLeft = ["courier-curl"]
        report.transfersLeft = 2
        report.started = 9
        let problems = SoakRun.problems(in: report)
        #expect(problems.count == 4)
        #expect(problems.contains { $0.contains("socket:[123]") })
    }

    @Test(
        "bad soak options fail before anything runs",
        arguments: [
            ["--transport", "mock"], ["--calls", "0"], ["--fault-rate", "1.5"], ["--concurrency", "0"], ["--timeout", "0"],
            ["--stall", "-1"], ["--max-seconds", "0"],
        ])
    func badOptions(arguments: [String]) {
        #expect(throws: (any Error).self) { try SoakCommand.parse(arguments) }
    }

    @Test("the calls mix GETs, keyed POSTs and unkeyed POSTs, six, two and two in ten")
    func mix() {
        let kinds = (0..<100).map(SoakCall.kind(of:))
        #expect(kinds.filter { $0 == .get }.count == 60)
        #expect(kinds.filter { $0 == .keyedPost }.count == 20)
        #expect(kinds.filter { $0 == .unkeyedPost }.count == 20)
    }
}
