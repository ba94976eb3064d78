import ArgumentParser
import Foundation

/// `courier-bench soak`: a long run through a faulty loopback server that checks nothing is lost.
public struct SoakCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Runs many calls against a faulty loopback server and checks that none is lost or completed twice.",
        discussion: """
            The embedded server answers a share of requests (--fault-rate) with a reset, a stall past the deadline, a 503, \
            a truncated body or a slow body. The client has a queue, retry (POSTs with an Idempotency-Key are retried, \
            POSTs without one never resent once they may have reached the server) and de-duplication; one call in fifty \
            is cancelled. The run fails (exit 1) when a call completes twice or never, when a POST without a key \
            reaches the server twice, or when file descriptors, threads or curl transfers are not back to where they were.
            """)

    @Option(help: "The transport: curl, urlsession or ahc.")
    var transport: String = "curl"
    @Option(help: "Calls to make (1 to 1,000,000).")
    var calls: Int = 10_000
    @Option(name: .customLong("fault-rate"), help: "The share of requests answered with a fault, 0 to 1.")
    var faultRate: Double = 0.2
    @Option(help: "Calls running at once (1 to 512); twice as many are started, so some wait in the queue.")
    var concurrency: Int = 32
    @Option(help: "Each call's deadline in seconds (0.1 to 60).")
    var timeout: Double = 2
    @Option(help: "Seconds the server holds a stalled request before closing it (0 to 60).")
    var stall: Double = 3
    @Option(help: "Picks which requests get which fault.")
    var seed: UInt64 = 1
    @Option(name: .customLong("max-seconds"), help: "The most the run may take (1 to 3600); calls pending then count as lost.")
    var maxSeconds: Double = 600
    @Option(help: "Write the report as JSON to this file.")
    var json: String?

    public init() {}

    public func validate() throws {
        guard let chosen = BenchTransport(rawValue: transport), [.curl, .urlsession, .ahc].contains(chosen) else {
            throw ValidationError("--transport must be curl, urlsession or ahc")
        }
        guard TransportFactory.isLinked(chosen) else { throw ValidationError("this build does not link \(transport)") }
        guard (1...1_000_000).contains(calls) else { throw ValidationError("--calls must be 1 to 1,000,000") }
        guard (0...1).contains(faultRate) else { throw ValidationError("--fault-rate must be 0 to 1") }
        guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 512") }
        guard (0.1...60).contains(timeout) else { throw ValidationError("--timeout must be 0.1 to 60 seconds") }
        guard (0...60).contains(stall) else { throw ValidationError("--stall must be 0 to 60 seconds") }
        guard (1...3600).contains(maxSeconds) else { throw ValidationError("--max-seconds must be 1 to 3600") }
    }

    public func run() async throws {
        var options = SoakOptions()
        options.transport = BenchTransport(rawValue: transport) ?? .curl
        options.calls = calls
        options.faultRate = faultRate
        options.concurrency = concurrency
        options.timeout = .milliseconds(Int64(timeout * 1000))
        options.stall = .milliseconds(Int64(stall * 1000))
        options.seed = seed
        options.maxDuration = .milliseconds(Int64(maxSeconds * 1000))
        let report = try await SoakRun.run(options)
        print(SoakRun.describe(report))
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
        if !report.problems.isEmpty { throw ExitCode(1) }
    }
}

extension SoakRun {
    /// The report as text.
    public static func describe(_ report: SoakReport) -> String {
        func list(_ counts: [String: Int]) -> String {
            counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        var lines: [String] = [
            "soak: \(report.calls) calls over \(report.transport), \(Int(report.faultRate * 100))% faults, \(String(format: "%.1f", report.seconds)) s",
            "  calls:       started \(report.started), completed \(report.completed), succeeded \(report.succeeded), retried \(report.retried), shared a transfer \(report.deduplicated)",
            "  failed:      \(list(report.failed))",
        ]
        lines += report.failureExamples.sorted { $0.key < $1.key }.map { "    e.g. \($0.key): \($0.value)" }
        lines += [
            "  server:      \(report.serverRequests) requests on \(report.serverConnections) connections; faults: \(list(report.serverFaults))",
            "  POSTs:       unkeyed duplicates \(report.unkeyedPOSTDuplicates), keyed repeats \(report.keyedPOSTRepeats)",
            "  invariants:  completed twice \(report.completedTwice), lost \(report.lost)",
            "  descriptors: \(report.descriptorsAtStart) at the start, \(report.descriptorsAtEnd) at the end; threads left \(report.threadsLeft.count), curl transfers left \(report.transfersLeft)",
            "  RSS:         \(report.rssAtStartKiB / 1024) MiB at the start, \(report.rssAtEndKiB / 1024) MiB at the end",
        ]
        lines.append(report.problems.isEmpty ? "PASS" : "FAIL: " + report.problems.joined(separator: "; "))
        return lines.joined(separator: "\n")
    }
}
