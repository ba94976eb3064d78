import ArgumentParser
import Courier
import CourierCache
import CourierTestServer
import Foundation
import HTTPTypes

/// `courier-bench`: compares Courier's transports on an embedded server or your own endpoint.
public struct CourierBenchCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "courier-bench",
        abstract: "Compares Courier's transports with each other and with libcurl itself.",
        subcommands: [
            RunCommand.self, CompareCommand.self, SoakCommand.self, ProbeCommand.self, DecodeCommand.self, OpenAPICommand.self,
            HedgeCommand.self, CountCommand.self,
            StormCommand.self,
            WorkerCommand.self,
        ],
        defaultSubcommand: RunCommand.self)

    public init() {}
}

/// `courier-bench run`: the comparison.
public struct RunCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Runs the comparison (by default about three minutes on a 2-core machine).",
        discussion: """
            With no options: curl, curl-engine, urlsession, ahc, mock and the C reference; small GET at concurrency 64 over \
            HTTP/1.1 and HTTP/2, and medium GET at concurrency 16, against the embedded loopback server. Each \
            client runs in its own process, one after another; each cell is repeated and the median reported.
            """)

    @Option(
        help:
            "Comma-separated clients: curl, curl-engine (curl with the callers on its thread), urlsession, ahc, mock, reference (the C program on libcurl)."
    )
    var transports: String?
    @Option(
        help:
            "Comma-separated scenarios: small (100 B GET), medium (16 KiB GET), large (1 MiB GET), post (1 KiB JSON), cached (a GET the client's memory cache answers), cached-disk (a 16 KiB GET its disk cache answers); get or post with --url."
    )
    var scenarios: String?
    @Option(help: "Comma-separated requests in flight, 1 to 1000.")
    var concurrency: String?
    @Option(help: "Comma-separated HTTP versions: 1.1, 2 (over TLS), h2c (cleartext, prior knowledge).")
    var http: String?
    @Option(help: "Counted requests per run (the run still stops after --duration, 60 s if not given).")
    var requests: Int?
    @Option(help: "Seconds per counted run (default 2).")
    var duration: Double?
    @Option(help: "Seconds of uncounted load before each run.")
    var warmup: Double = 0.5
    @Option(name: .customLong("repeat"), help: "Runs per client and cell; the median is reported.")
    var repeats: Int = 3
    @Flag(help: "Pin the server to CPU 0 and each client process to CPU 1.")
    var pin = false
    @Flag(help: "Run the whole matrix: every scenario, concurrency 1, 16 and 64, HTTP/1.1 and HTTP/2.")
    var full = false
    @Option(help: "Measure this endpoint instead of the embedded server (bounded by --requests and --duration).")
    var url: String?
    @Option(help: "A CA bundle (PEM) to trust for --url.")
    var cacert: String?
    @Option(name: .customShort("H"), help: "A header every request sends, as 'Name: value' (repeatable).")
    var header: [String] = []
    @Option(name: .customShort("X"), help: "With --url: the method (default GET, or POST with --data).")
    var method: String?
    @Option(help: "With --url: a body every request sends (Content-Type application/octet-stream unless -H sets it).")
    var data: String?
    @Option(name: .customLong("data-file"), help: "With --url: send this file's contents (at most 16 MiB) as the body.")
    var dataFile: String?
    @Option(help: "Seconds each request may take (default 60, at most 600).")
    var timeout: Double?
    @Option(help: "Write the rows as JSON to this file.")
    var json: String?
    @Option(help: "Write report.md and SVG charts into this directory.")
    var report: String?
    @Flag(name: .customLong("no-limit"), help: "Skip wrk and h2load even when installed.")
    var noLimit = false
    @Option(
        help:
            "Open loop: each client sends this many requests per second whatever the responses do, at most --concurrency in flight; latency counts from each request's scheduled time. Without it, the closed loop."
    )
    var rate: Double?
    @Flag(
        help:
            "Courier clients read each body as a stream, counting and dropping its chunks as the C reference does, instead of holding it whole (the memory target's setting)."
    )
    var stream = false
    @Flag(help: "Exit with 1 when a target is missed (for CI on a quiet machine); by default targets are informational.")
    var strict = false

    public init() {}

    /// The checked plan.
    public func plan() throws(BenchError) -> RunPlan {
        var input = RunPlan.Input()
        input.transports = transports
        input.scenarios = scenarios
        input.concurrency = concurrency
        input.http = http
        input.requests = requests
        input.duration = duration
        input.warmup = warmup
        input.repeats = repeats
        input.pin = pin
        input.full = full
        input.url = url
        input.caFile = cacert
        input.request = requestOptions(method: method, headers: header, data: data, dataFile: dataFile, timeout: timeout)
        input.json = json
        input.report = report
        input.noLimit = noLimit
        input.rate = rate
        input.strict = strict
        input.stream = stream
        return try RunPlan.make(input)
    }

    public func validate() throws {
        try asValidation { () throws(BenchError) in _ = try plan() }
    }

    public func run() async throws {
        let plan = try plan()
        let runner = BenchRunner(
            plan: plan, executable: try Self.ownExecutable(), commandLine: CommandLine.arguments.joined(separator: " "))
        let report = try await runner.run()
        print(TableRenderer.text(report.rows))
        print("")
        print("\(report.placement); \(report.cores) CPUs; libcurl \(report.libcurl); Swift \(report.swift); commit \(report.commit)")
        print("\(report.loop); limit tools: \(report.limitTools)")
        for line in TableRenderer.targets(report.targets) { print(line) }
        if let path = plan.jsonPath {
            try ReportWriter.writeJSON(report, to: path)
            print("JSON: \(path)")
        }
        if let directory = plan.reportDirectory {
            try ReportWriter.writeReport(report, to: directory)
            print("report: \((directory as NSString).appendingPathComponent("report.md"))")
        }
        if report.hasErrors {
            print("Some requests failed: rows marked ! (first errors above and in the report).")
            throw ExitCode(1)
        }
        if plan.strict, report.missedTargets {
            print("--strict: \(report.targets.filter { !$0.met }.count) target(s) missed.")
            throw ExitCode(1)
        }
    }

    /// This program's own path, for starting workers.
    static func ownExecutable() throws(BenchError) -> String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        let first = CommandLine.arguments.first ?? ""
        guard !first.isEmpty,
            let found = ChildProcess.find(first.hasPrefix("/") ? first : FileManager.default.currentDirectoryPath + "/" + first)
        else { throw .worker("cannot find courier-bench's own executable to start workers") }
        return found
    }
}

/// `courier-bench worker`: runs one measured job; started by `run`, not by people.
public struct WorkerCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "Runs one measured job given as a JSON file (used by `run`).", shouldDisplay: false)

    /// A file rather than an argument: a job's request body may be larger than one argument may be.
    @Option(name: .customLong("job-file"), help: "The job, as a JSON file.")
    var jobFile: String

    public init() {}

    public func run() async throws {
        let decoded: WorkerJob
        do {
            decoded = try JSONDecoder().decode(WorkerJob.self, from: Data(contentsOf: URL(fileURLWithPath: jobFile)))
        } catch {
            throw ValidationError("--job-file \(jobFile) is not a readable job: \(error)")
        }
        let result = try await Worker.run(decoded)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(result), as: UTF8.self))
    }
}

/// `courier-bench probe URL`: one request through each transport.
public struct ProbeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Sends one request through each transport and shows what each one saw.")

    @Argument(help: "The http:// or https:// URL to request.")
    var url: String
    @Option(help: "Only this transport: curl, urlsession or ahc (default: all).")
    var transport: String?
    @Option(name: .customShort("H"), help: "A header, as 'Name: value' (repeatable).")
    var header: [String] = []
    @Option(name: .customShort("X"), help: "The method (default GET, or POST with --data).")
    var method: String?
    @Option(help: "A request body to send (Content-Type application/octet-stream unless -H sets it).")
    var data: String?
    @Option(name: .customLong("data-file"), help: "Send this file's contents (at most 16 MiB) as the body.")
    var dataFile: String?
    @Option(help: "Seconds the whole call may take (default 30, at most 600).")
    var timeout: Double = 30
    @Option(help: "A CA bundle (PEM) to trust as well as the system's.")
    var cacert: String?
    @Option(help: "The HTTP version: 1.1 or 2.")
    var http: String?
    @Option(help: "Use a disk response cache in this directory: probe twice to see what the endpoint's headers let a cache do.")
    var cache: String?
    @Option(help: "A forward proxy, http://[user:password@]host:port, or 'environment' for http_proxy, https_proxy and no_proxy.")
    var proxy: String?
    @Flag(help: "Print one JSON object per transport.")
    var json = false

    public init() {}

    /// The checked probe.
    public func probe() throws(BenchError) -> Probe {
        guard RunPlan.isHTTPURL(url) else {
            throw .invalidOption("URL must be an absolute http:// or https:// URL with a host (got \"\(url)\")")
        }
        var transports = Probe.transports
        if let transport {
            guard let chosen = BenchTransport(rawValue: transport.lowercased()), Probe.transports.contains(chosen) else {
                throw .invalidOption("--transport: unknown transport \"\(transport)\" (allowed: curl, urlsession, ahc)")
            }
            transports = [chosen]
        }
        let request = try requestOptions(method: method, headers: header, data: data, dataFile: dataFile, timeout: timeout)
            .request()
        var version: HTTPChoice?
        if let http {
            guard let choice = HTTPChoice(rawValue: http), choice != .h2c else {
                throw .invalidOption("--http takes 1.1 or 2 (got \"\(http)\")")
            }
            version = choice
        }
        if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
            throw .invalidOption("--cacert \(cacert): no readable file there")
        }
        if let cache {
            do {
                _ = try DiskCacheStore(directory: cache)
            } catch {
                throw .invalidOption("--cache \(cache): \(error.allowed) is needed")
            }
        }
        var proxies = ProxyConfiguration.none
        if let proxy {
            do {
                proxies = proxy.lowercased() == "environment" ? try ProxyConfiguration.environment() : try ProxyConfiguration(server: proxy)
            } catch {
                throw .invalidOption("--proxy: \(error)")
            }
        }
        var probe = Probe(url: url, transports: transports, request: request, caFile: cacert, http: version, cacheDirectory: cache)
        probe.proxy = proxies
        return probe
    }

    public func validate() throws {
        try asValidation { () throws(BenchError) in _ = try probe() }
    }

    public func run() async throws {
        let outcomes = try await probe().run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for outcome in outcomes { print(String(decoding: try encoder.encode(outcome), as: UTF8.self)) }
        } else {
            print(Probe.text(outcomes))
        }
        if outcomes.contains(where: { $0.errorKind != nil }) { throw ExitCode(1) }
    }
}

extension CourierBenchCommand {
    /// Parses the command line, runs the chosen subcommand, and exits with its status.
    public static func runFromCommandLine() async {
        await main()
    }
}

/// The request-shaping options of `run` and `probe`, gathered.
func requestOptions(method: String?, headers: [String], data: String?, dataFile: String?, timeout: Double?) -> RequestOptions {
    var options = RequestOptions()
    options.method = method
    options.headers = headers
    options.data = data
    options.dataFile = dataFile
    options.timeout = timeout
    return options
}

/// Runs a check and reports its ``BenchError`` the way ArgumentParser shows bad input.
func asValidation(_ check: () throws(BenchError) -> Void) throws {
    do {
        try check()
    } catch {
        throw ValidationError(error.description)
    }
}

/// `courier-bench compare OLD.json NEW.json`: two runs' rows side by side.
public struct CompareCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compares two runs' --json files row by row and flags changes beyond the noise of the repeats.",
        discussion: """
            Rows match by client, scenario, HTTP version and concurrency. A row is better or WORSE when the two runs' \
            ranges of requests/s over their repeats do not overlap (with one repeat: a change above 5%); open-loop runs \
            (--rate) are judged by p99 latency, 10%.
            """)

    @Argument(help: "The earlier run's --json file.")
    var old: String
    @Argument(help: "The later run's --json file.")
    var new: String
    @Flag(help: "Exit with 1 when a row got worse beyond the noise.")
    var strict = false

    public init() {}

    public func run() async throws {
        let comparison = Comparison(old: try Comparison.load(old), new: try Comparison.load(new))
        print(comparison.text)
        if strict, comparison.hasRegressions { throw ExitCode(1) }
    }
}
