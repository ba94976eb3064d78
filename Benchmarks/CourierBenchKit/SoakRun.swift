import Courier
import CourierCurl
import CourierTestServer
import Foundation
import Synchronization

/// What a soak run does: how many calls, through what, against how faulty a server.
public struct SoakOptions: Sendable {
    /// The transport (curl, urlsession or ahc).
    public var transport: BenchTransport = .curl
    /// Calls to make.
    public var calls = 10_000
    /// The share of requests the server answers with a fault.
    public var faultRate = 0.2
    /// Calls the queue runs at once (twice as many are started, so some wait).
    public var concurrency = 32
    /// Each call's deadline.
    public var timeout: Duration = .seconds(2)
    /// How long the server holds a stalled request.
    public var stall: Duration = .seconds(3)
    /// Picks the faults.
    public var seed: UInt64 = 1
    /// The most the whole run may take; calls still pending then count as lost.
    public var maxDuration: Duration = .seconds(600)

    public init() {}
}

/// What a soak run found. The invariants: nothing completed twice, nothing lost, no `POST`
/// without an idempotency key reached the server twice, and descriptors back to where they were.
public struct SoakReport: Codable, Sendable {
    public var transport: String
    public var calls: Int
    public var faultRate: Double
    public var seconds: Double
    public var started: Int
    public var completed: Int
    public var succeeded: Int
    /// Failures by error kind.
    public var failed: [String: Int]
    /// The first failure of each kind: its phase and message.
    public var failureExamples: [String: String]
    public var completedTwice: Int
    public var lost: Int
    public var deduplicated: Int
    public var retried: Int
    public var serverRequests: Int
    public var serverConnections: Int
    /// Faults the server played, by kind.
    public var serverFaults: [String: Int]
    public var unkeyedPOSTDuplicates: Int
    public var keyedPOSTRepeats: Int
    public var descriptorsAtStart: Int
    public var descriptorsAtEnd: Int
    /// What each descriptor open at the end but not at the start points at.
    public var descriptorsLeft: [String]
    /// Threads running at the end that did not run at the start (libdispatch's pool left out).
    public var threadsLeft: [String]
    /// Curl transfers never released (curl only; 0 for the other transports).
    public var transfersLeft: Int
    public var rssAtStartKiB: Int
    public var rssAtEndKiB: Int
    /// Each broken invariant, in words; empty when the run passed.
    public var problems: [String]
}

/// Runs a soak: the embedded ``SoakServer`` and a `NetworkClient` with a queue, retry (with
/// idempotency keys for `POST`) and de-duplication over the chosen transport.
public enum SoakRun {
    /// Runs one soak.
    /// - Parameter options: What to run.
    /// - Returns: The report; its ``SoakReport/problems`` list what broke.
    /// - Throws: When the server or the client cannot be set up.
    public static func run(_ options: SoakOptions) async throws -> SoakReport {
        // A short clean run first, so that what a process sets up once (libdispatch's timer,
        // libcurl's global state) is there before the baseline.
        let warmUpServer = try await SoakServer.start(faultRate: 0)
        var warmUp = options
        warmUp.calls = min(options.calls, 100)
        _ = try await makeCalls(warmUp, server: warmUpServer, tally: SoakTally())
        await warmUpServer.shutdown()
        let server = try await SoakServer.start(faultRate: options.faultRate, seed: options.seed, stall: options.stall)
        let atStart = ProcessSnapshot.now()
        let rssAtStart = residentKiB()
        let clock = ContinuousClock()
        let began = clock.now
        let tally = SoakTally()
        let transfersLeft = try await makeCalls(options, server: server, tally: tally)
        let seconds = (clock.now - began).seconds
        // The client is gone: its connections close, and the server's ends with them.
        let atEnd = try await ProcessSnapshot.settled(towards: atStart)
        let counts = server.counts
        await server.shutdown()
        return tally.state.withLock { state in
            var report = SoakReport(
                transport: options.transport.rawValue, calls: options.calls, faultRate: options.faultRate, seconds: seconds,
                started: state.started, completed: state.completed, succeeded: state.succeeded, failed: state.failed,
                failureExamples: state.examples,
                completedTwice: state.completedTwice, lost: state.started - state.completed, deduplicated: state.deduplicated,
                retried: state.retried, serverRequests: counts.requests, serverConnections: counts.connections,
                serverFaults: Dictionary(uniqueKeysWithValues: counts.faults.map { ($0.key.rawValue, $0.value) }),
                unkeyedPOSTDuplicates: counts.unkeyedPOSTDuplicates, keyedPOSTRepeats: counts.keyedPOSTRepeats,
                descriptorsAtStart: atStart.descriptors.count, descriptorsAtEnd: atEnd.descriptors.count,
                descriptorsLeft: atEnd.descriptorsBeyond(atStart), threadsLeft: atEnd.threadsBeyond(atStart), transfersLeft: transfersLeft,
                rssAtStartKiB: rssAtStart,
                rssAtEndKiB: residentKiB(), problems: [])
            report.problems = problems(in: report)
            return report
        }
    }

    /// The invariants `report` breaks, in words.
    static func problems(in report: SoakReport) -> [String] {
        var problems: [String] = []
        if report.started != report.calls { problems.append("\(report.started) of \(report.calls) calls started") }
        if report.completedTwice > 0 { problems.append("\(report.completedTwice) completions ran a second time") }
        if report.lost > 0 { problems.append("\(report.lost) calls never completed") }
        if report.unkeyedPOSTDuplicates > 0 {
            problems.append("\(report.unkeyedPOSTDuplicates) POSTs without an idempotency key reached the server twice")
        }
        if !report.threadsLeft.isEmpty { problems.append("threads still running: \(report.threadsLeft.joined(separator: ", "))") }
        if report.transfersLeft > 0 { problems.append("\(report.transfersLeft) curl transfers never released") }
        if !report.descriptorsLeft.isEmpty {
            problems.append("descriptors left open: \(report.descriptorsLeft.joined(separator: ", "))")
        }
        return problems
    }

    /// Starts every call, at most twice the concurrency in flight, and waits for them to end
    /// (or for the run's bound), then shuts the client down.
    /// - Returns: Curl transfers still alive after the shutdown (0 for the other transports).
    private static func makeCalls(_ options: SoakOptions, server: SoakServer, tally: SoakTally) async throws -> Int {
        let transport = try TransportFactory.make(
            options.transport, http: .http1, caFile: nil, connections: options.concurrency, mockResponseBytes: 0)
        var configuration = ClientConfiguration(baseURL: server.baseURL, transport: options.transport.rawValue)
        configuration.requestTimeout = options.timeout
        var retry = RetryPolicy()
        retry.baseDelay = .milliseconds(20)
        retry.maxDelay = .milliseconds(200)
        configuration.retry = retry
        configuration.queue = RequestQueue.Limits(
            maxConcurrent: options.concurrency, maxConcurrentPerHost: options.concurrency, maxWaiting: options.concurrency * 4)
        let client = try NetworkClient(configuration: configuration, transport: transport)
        let (permits, permitSource) = AsyncStream<Void>.makeStream()
        tally.state.withLock { $0.onComplete = { permitSource.yield() } }
        let deadline = ContinuousClock.now + options.maxDuration
        var iterator = permits.makeAsyncIterator()
        for number in 0..<options.calls {
            if number >= options.concurrency * 2 {
                guard ContinuousClock.now < deadline, await iterator.next() != nil else { break }
            }
            let call = SoakCall(client: client, number: number)
            tally.started(number)
            do {
                // The completion is dropped once it has run, so holding the call here is no cycle.
                try call.start { result in tally.completed(number, result, metrics: call.metrics) }
            } catch {
                tally.completed(number, .failure(error), metrics: nil)
            }
            // One call in fifty is cancelled soon after it starts.
            if number % 50 == 49 {
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) { call.cancel() }
            }
        }
        while tally.pending > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // A completion that runs a second time usually does so at once; give it a moment.
        try await Task.sleep(for: .milliseconds(200))
        permitSource.finish()
        tally.state.withLock { $0.onComplete = nil }
        await client.shutdown()
        return (transport as? CurlTransport)?.liveTransfers ?? 0
    }

    /// `VmRSS` from `/proc/self/status`, in KiB.
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }
}

extension Duration {
    /// The duration in seconds.
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
