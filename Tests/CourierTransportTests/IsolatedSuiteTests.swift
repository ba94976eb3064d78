import CourierTestServer
import Foundation
import Testing

/// A suite that needs the process to itself, run in a child process of this test binary.
///
/// `swift test` runs suites side by side in one process. Two suites cannot share it:
/// - `ConformanceHygieneTests` counts the process's descriptors and threads, which every suite
///   running beside it moves;
/// - `ConformanceRealClockTests` measures socket-level limits (stall, connect timeout, how fast a
///   cancellation lands) on the real clock, and Swift's cooperative pool (one thread per core) can
///   be held for seconds by a CPU-heavy case beside it (a decompression bomb, a 64 MiB body);
/// - `MutualTLSTests` expects a refused handshake before a 10 s deadline on the real clock, which
///   the ahc variant outlived beside every other suite;
/// - `QueueSoakTests` puts 10,000 calls on the cooperative pool at once, and every wake-up of every
///   suite beside it (a mock's 20 ms delay, the shared deadline timer) queued behind them for tens
///   of seconds while the child processes of other suites held the two cores.
///
/// So the plain run starts the binary again for each of them, filtered to the suite, with
/// `COURIER_ISOLATED_SUITE` naming it: the child has its own descriptors, threads and cooperative
/// pool, and the suite's cases run there one at a time. In the parent they are disabled, and the
/// case here passes only when the child ran at least one test and all passed.
enum IsolatedSuite: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case hygiene = "ConformanceHygieneTests"
    case realClock = "ConformanceRealClockTests"
    case mutualTLS = "MutualTLSTests"
    case queueSoak = "QueueSoakTests"

    /// The variable that tells a child process which suite it runs.
    static let variable = "COURIER_ISOLATED_SUITE"

    /// The suite this process was started to run, if it is such a child.
    static let current = ProcessInfo.processInfo.environment[variable]

    /// Whether this suite's cases run in this process (it is the child started for them).
    var runsHere: Bool { Self.current == rawValue }

    var testDescription: String { rawValue }
}

@Suite("Suites that need a process of their own, each in a child test process", .timeLimit(.minutes(20)))
struct IsolatedSuiteTests {
    // One child at a time: each is a whole test process, and the cases in it measure time.
    @Test(
        "the suite runs alone in a child process and passes", .serialized, .enabled(if: IsolatedSuite.current == nil),
        arguments: IsolatedSuite.allCases)
    func runAlone(suite: IsolatedSuite) async throws {
        let binary = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let outcome = try await ChildProcess.run(
            binary, ["--testing-library", "swift-testing", "--filter", "\\.\(suite.rawValue)/"],
            environment: [IsolatedSuite.variable: suite.rawValue], timeout: .seconds(900))
        let printed = outcome.output + outcome.errors
        // What the child recorded, so that a failure here says what failed there.
        let issues = printed.split(separator: "\n").filter { $0.contains("recorded an issue") || $0.contains("failed") }
        #expect(!outcome.timedOut, "\(suite.rawValue) ran past 15 minutes in its child process")
        #expect(outcome.status == 0, "\(suite.rawValue) failed in its child process:\n\(issues.prefix(40).joined(separator: "\n"))")
        // A filter that matched nothing, or a suite whose cases were all skipped, would pass with
        // nothing run: the child must have passed cases of the suite and skipped none.
        let lines = printed.split(separator: "\n")
        let passed = lines.filter { $0.contains("Test ") && $0.contains(" passed after ") && !$0.contains("Test run with") }
        #expect(!passed.isEmpty, "the child process passed no test of \(suite.rawValue):\n\(printed.suffix(2000))")
        #expect(!lines.contains { $0.contains(" skipped") }, "the child process skipped cases of \(suite.rawValue)")
    }
}
