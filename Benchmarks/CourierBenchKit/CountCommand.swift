import ArgumentParser
import CourierTestServer
import Foundation

/// `courier-bench count`: the runtime's work per call, counted exactly.
public struct CountCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Counts swift_retain, swift_release, malloc, task switches and mutex locks per call (needs perf and root).",
        discussion: """
            Runs `courier-bench run` for one transport twice under `perf stat` with uprobes on the Swift runtime and \
            libc, a short run and a long one, and prints (long - short) / (the difference in calls): start-up cancels \
            out, and the counts do not move with machine noise. The whole client process is counted, every thread. \
            Without --url a transport other than mock calls a loopback HTTP/1.1 server in this process, which is \
            not counted, answering in the shape --server names: one-write (head and a 100-byte body in one write), \
            split (the head, then the body 2 ms later in a second write, as many real servers write), or \
            many-headers (8 more header lines, one write).
            """)

    @Option(help: "The client: curl, curl-engine, urlsession, ahc, mock.")
    var transport: String = "curl-engine"
    @Option(help: "Measure against this endpoint (a GET) instead of the loopback server.")
    var url: String?
    @Option(help: "How the loopback server writes its answer: one-write, split, many-headers.")
    var server: String?
    @Option(help: "Requests in flight (default 16; 64 for mock).")
    var concurrency: Int?
    @Option(help: "The short and the long run's calls, as 'short,long' (default 5000,15000; 20000,70000 for mock).")
    var calls: String?
    @Option(help: "Write the counts as JSON to this file.")
    var json: String?

    public init() {}

    /// How the loopback server writes its answer (the same 100 bytes of body each time).
    public enum ServerShape: String, CaseIterable, Sendable {
        /// The head and the body in one write.
        case oneWrite = "one-write"
        /// The head, then the body 2 ms later in a second write.
        case split
        /// Eight more header lines, one write.
        case manyHeaders = "many-headers"

        /// The loopback server's path for the shape.
        public var path: String {
            switch self {
            case .oneWrite: Scenario.small.path
            case .split: "/shaped/100?splitMs=2"
            case .manyHeaders: "/shaped/100?lines=8"
            }
        }
    }

    /// What the command runs: checked options.
    public struct Plan: Equatable, Sendable {
        public var transport: String
        public var url: String?
        /// The loopback server's shape; `nil` with `--url` or for the mock.
        public var server: ServerShape? = nil
        public var concurrency: Int
        public var short: Int
        public var long: Int
    }

    /// The checked plan.
    public func plan() throws(BenchError) -> Plan {
        // Every client but the C reference, which is not a Courier process to count.
        let known = BenchTransport.allCases.filter { $0 != .reference }.map(\.rawValue)
        guard known.contains(transport) else {
            throw .invalidOption("--transport must be one of \(known.joined(separator: ", ")); '\(transport)' is not")
        }
        let mock = transport == BenchTransport.mock.rawValue
        let concurrency = self.concurrency ?? (mock ? 64 : 16)
        guard (1...1000).contains(concurrency) else { throw .invalidOption("--concurrency must be 1 to 1000") }
        var (short, long) = mock ? (20_000, 70_000) : (5_000, 15_000)
        if let calls {
            let parts = calls.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let first = parts[0], let second = parts[1], first >= 1, second > first, second <= 10_000_000 else {
                throw .invalidOption("--calls must be 'short,long' with 1 <= short < long <= 10000000")
            }
            (short, long) = (first, second)
        }
        if let url {
            guard RunPlan.isHTTPURL(url) else { throw .invalidOption("--url must be an http or https URL") }
        }
        var shape: ServerShape?
        if let server {
            guard let named = ServerShape(rawValue: server) else {
                let names = ServerShape.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidOption("--server must be one of \(names); '\(server)' is not")
            }
            guard url == nil, !mock else { throw .invalidOption("--server shapes the loopback server: not with --url or the mock") }
            shape = named
        } else if url == nil, !mock {
            shape = .oneWrite
        }
        return Plan(transport: transport, url: mock ? nil : url, server: shape, concurrency: concurrency, short: short, long: long)
    }

    public func validate() throws {
        try asValidation { () throws(BenchError) in _ = try plan() }
    }

    public func run() async throws {
        let plan = try plan()
        guard let perf = ChildProcess.find("perf") else {
            throw BenchError.unsupported("perf is not installed (Debian: apt-get install linux-perf)")
        }
        let events = try await UprobeCounts.install(perf: perf)
        let executable = try RunCommand.ownExecutable()
        // The loopback server runs here, outside the counted process.
        let server = plan.url == nil && plan.transport != BenchTransport.mock.rawValue ? try await TestServer.start(mode: .http1) : nil
        let url = plan.url ?? server.map { $0.baseURL + (plan.server ?? .oneWrite).path }
        var totals: [Int: [String: Double]] = [:]
        do {
            for calls in [plan.short, plan.long] {
                totals[calls] = try await UprobeCounts.measure(
                    perf: perf, events: events, executable: executable, arguments: Self.runArguments(plan, url: url, calls: calls))
            }
        } catch {
            await server?.shutdown()
            throw error
        }
        await server?.shutdown()
        let perCall = UprobeCounts.perCall(short: totals[plan.short] ?? [:], long: totals[plan.long] ?? [:], calls: plan.long - plan.short)
        // Every call retains something: none means the runs made no calls.
        guard let retains = perCall["swift_retain"], retains > 0 else {
            throw BenchError.worker("the measured runs made no calls (swift_retain did not grow with the calls)")
        }
        let line = UprobeCounts.names.map { name in "\(name)=\(perCall[name].map { String(format: "%.1f", $0) } ?? "?")" }
        print("\(plan.transport), \(url ?? "no server"), c\(plan.concurrency), (\(plan.long) - \(plan.short) calls):")
        print(line.joined(separator: " "))
        if let json {
            let data = try JSONSerialization.data(withJSONObject: perCall, options: [.sortedKeys, .prettyPrinted])
            guard FileManager.default.createFile(atPath: json, contents: data) else { throw BenchError.file("could not write \(json)") }
        }
    }

    /// The `run` command each measured process gets.
    static func runArguments(_ plan: Plan, url: String?, calls: Int) -> [String] {
        var arguments = ["run", "--transports", plan.transport, "--concurrency", "\(plan.concurrency)", "--repeat", "1"]
        arguments += ["--requests", "\(calls)", "--warmup", "0", "--duration", "60", "--no-limit"]
        if let url { arguments += ["--url", url] } else { arguments += ["--scenarios", "small", "--http", "1.1"] }
        return arguments
    }
}

/// Uprobes on the runtime functions a call's cost is counted in, and `perf stat`'s reading of them.
enum UprobeCounts {
    /// The functions, in the order they are reported, with the library each lives in.
    static let probes: [(name: String, library: String)] = [
        ("swift_retain", "libswiftCore.so"), ("swift_release", "libswiftCore.so"), ("malloc", "libc.so.6"),
        ("swift_task_switch", "libswift_Concurrency.so"), ("pthread_mutex_lock", "libc.so.6"),
    ]
    static var names: [String] { probes.map(\.name) }

    /// Adds the uprobes (once per machine; an existing one is kept) and returns perf's event list.
    /// The libraries are the ones this process has loaded, read from `/proc/self/maps`, so the
    /// probes sit in the very files the measured processes use.
    static func install(perf: String) async throws -> String {
        // Read to its end: a file in /proc announces a size of 0.
        let maps = String(decoding: (try? FileHandle(forReadingAtPath: "/proc/self/maps")?.readToEnd()) ?? Data(), as: UTF8.self)
        var events: [String] = []
        for probe in probes {
            guard let path = library(probe.library, in: maps) else {
                throw BenchError.unsupported("\(probe.library) is not loaded in this process; cannot place the \(probe.name) probe")
            }
            let added = try await ChildProcess.run(perf, ["probe", "-x", path, probe.name], timeout: .seconds(60))
            let group = "probe_" + (probe.library.split(separator: ".").first.map(String.init) ?? probe.library)
            if added.status != 0, !added.errors.contains("already exists") {
                throw BenchError.unsupported(
                    "perf could not add a uprobe on \(probe.name) in \(path) (it needs root): \(added.errors.prefix(300))")
            }
            events.append("\(group):\(probe.name)")
        }
        return events.joined(separator: ",")
    }

    /// The path of the loaded library named `name` in a `/proc/PID/maps` text.
    static func library(_ name: String, in maps: String) -> String? {
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            if (path as NSString).lastPathComponent == name { return path }
        }
        return nil
    }

    /// Runs `executable` under `perf stat` and returns each event's count.
    static func measure(perf: String, events: String, executable: String, arguments: [String]) async throws -> [String: Double] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-count-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = try await ChildProcess.run(
            perf, ["stat", "-x,", "-e", events, "-o", output, "--", executable] + arguments, timeout: .seconds(300))
        guard outcome.status == 0, !outcome.timedOut else {
            throw BenchError.worker(
                "the measured run failed (status \(outcome.status)\(outcome.timedOut ? ", stopped after 300 s" : "")): "
                    + "\(outcome.errors.suffix(500))\(outcome.output.suffix(500))")
        }
        if let unsupported = outcome.output.split(separator: "\n").first(where: { $0.contains("unsupported:") }) {
            throw BenchError.unsupported(
                String(unsupported.split(separator: "unsupported:", maxSplits: 1).last ?? unsupported).trimmingCharacters(in: .whitespaces))
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let counts = parse(text)
        guard counts.count == probes.count else {
            throw BenchError.worker("perf stat reported \(counts.count) of \(probes.count) events: \(text)")
        }
        return counts
    }

    /// `perf stat -x,` lines (`count,unit,group:event,…`) as counts by function name; comments and
    /// `<not counted>` lines are skipped.
    static func parse(_ text: String) -> [String: Double] {
        var counts: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 2, let count = Double(fields[0]) else { continue }
            let event = fields[2].split(separator: ":").last.map(String.init) ?? ""
            if names.contains(event) { counts[event] = count }
        }
        return counts
    }

    /// The counts per call: the long run's minus the short run's, over the calls between them.
    static func perCall(short: [String: Double], long: [String: Double], calls: Int) -> [String: Double] {
        guard calls > 0 else { return [:] }
        var result: [String: Double] = [:]
        for name in names {
            guard let a = short[name], let b = long[name] else { continue }
            result[name] = (b - a) / Double(calls)
        }
        return result
    }
}
