import Foundation

/// A validated `courier-bench run`: what to run, how long, and where to write the results.
public struct RunPlan: Sendable, Equatable {
    /// The clients, in the order they run.
    public var transports: [BenchTransport]
    /// The matrix cells, in order.
    public var configurations: [BenchConfiguration]
    /// Each counted run starts no request after this many seconds.
    public var durationSeconds: Double
    /// Each counted run starts at most this many requests (`nil`: the duration alone bounds it).
    public var maxRequests: Int?
    /// Uncounted load before each counted run.
    public var warmupSeconds: Double
    /// Runs per transport and cell; the median is reported.
    public var repeats: Int
    /// Whether to pin the server to CPU 0 and each client to CPU 1.
    public var pin: Bool
    /// The user's endpoint, or `nil` for the embedded server.
    public var url: String?
    /// An extra CA to trust for `url`.
    public var caFile: String?
    /// What every request sends besides its URL: the caller's headers and deadline, and with
    /// `--url` the method and body of the ``Scenario/custom`` scenario.
    public var request: BenchRequest
    /// Where to write the rows as JSON.
    public var jsonPath: String?
    /// Where to write the Markdown report and its SVG charts.
    public var reportDirectory: String?
    /// Whether to run wrk and h2load (when installed) as the physical limit (never in the open loop).
    public var runsLimitTools: Bool
    /// Requests per second each client sends in an open loop (`--rate`); `nil` for the closed loop.
    public var rate: Double?
    /// Whether a missed target makes the run exit with 1 (`--strict`).
    public var strict: Bool
    /// Whether Courier clients read each body as a stream and drop it (`--stream`).
    public var streams = false

    /// The default comparison when no cell options are given: small GET at 64 over HTTP/1.1 and
    /// HTTP/2, and medium GET at 16 over HTTP/1.1.
    public static let defaultConfigurations = [
        BenchConfiguration(scenario: .small, concurrency: 64, http: .http1),
        BenchConfiguration(scenario: .small, concurrency: 64, http: .http2),
        BenchConfiguration(scenario: .medium, concurrency: 16, http: .http1),
    ]
    /// The most seconds one counted run may last.
    public static let maxDurationSeconds = 3600.0
    /// The duration bound when only `--requests` is given: a run never goes unbounded in time.
    public static let requestsOnlyDurationSeconds = 60.0
    /// The highest `--rate`.
    public static let maxRate = 1_000_000.0

    /// Every option as the command line gave it (lists still comma-separated).
    public struct Input: Sendable {
        /// `--transports`.
        public var transports: String?
        /// `--scenarios`.
        public var scenarios: String?
        /// `--concurrency`.
        public var concurrency: String?
        /// `--http`.
        public var http: String?
        /// `--requests`.
        public var requests: Int?
        /// `--duration`, in seconds.
        public var duration: Double?
        /// `--warmup`, in seconds.
        public var warmup: Double = 0.5
        /// `--repeat`.
        public var repeats: Int = 3
        /// `--pin`.
        public var pin = false
        /// `--full`.
        public var full = false
        /// `--url`.
        public var url: String?
        /// `--cacert`.
        public var caFile: String?
        /// `-X`, `-H`, `--data`, `--data-file` and `--timeout`.
        public var request = RequestOptions()
        /// `--json`.
        public var json: String?
        /// `--report`.
        public var report: String?
        /// `--no-limit`.
        public var noLimit = false
        /// `--rate`, in requests per second.
        public var rate: Double?
        /// `--strict`.
        public var strict = false
        /// `--stream`.
        public var stream = false

        /// Nothing given: the default comparison.
        public init() {}
    }

    /// Checks the options and builds the plan.
    /// - Parameter input: The options.
    /// - Returns: The plan.
    /// - Throws: ``BenchError/invalidOption(_:)`` naming the option and what it accepts.
    public static func make(_ input: Input) throws(BenchError) -> RunPlan {
        let transports = try list(input.transports, option: "--transports", default: BenchTransport.allCases)
        if let duration = input.duration, !(duration > 0 && duration <= maxDurationSeconds) {
            throw .invalidOption("--duration must be more than 0 and at most \(Int(maxDurationSeconds)) seconds (got \(duration))")
        }
        if let requests = input.requests, !(1...100_000_000).contains(requests) {
            throw .invalidOption("--requests must be 1 to 100000000 (got \(requests))")
        }
        guard input.warmup >= 0, input.warmup <= 600 else {
            throw .invalidOption("--warmup must be 0 to 600 seconds (got \(input.warmup))")
        }
        guard (1...20).contains(input.repeats) else { throw .invalidOption("--repeat must be 1 to 20 (got \(input.repeats))") }
        if let url = input.url { try checkURL(url) }
        if input.caFile != nil, input.url == nil {
            throw .invalidOption("--cacert is for --url endpoints; the embedded server's CA is trusted already")
        }
        if let caFile = input.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw .invalidOption("--cacert \(caFile): no readable file there")
        }
        if let rate = input.rate, !(rate >= 1 && rate <= maxRate) {
            throw .invalidOption("--rate must be 1 to \(Int(maxRate)) requests per second (got \(rate))")
        }
        let request = try input.request.request()
        if input.request.shapesRequest, input.url == nil {
            throw .invalidOption("-X, --data and --data-file are for --url endpoints; the embedded server's scenarios fix the request")
        }
        let configurations = try cells(input)
        let duration =
            input.duration ?? (input.requests == nil ? 2 : requestsOnlyDurationSeconds)
        return RunPlan(
            transports: transports, configurations: configurations, durationSeconds: duration, maxRequests: input.requests,
            warmupSeconds: input.warmup, repeats: input.repeats, pin: input.pin, url: input.url, caFile: input.caFile,
            request: request, jsonPath: input.json, reportDirectory: input.report, runsLimitTools: !input.noLimit && input.rate == nil,
            rate: input.rate, strict: input.strict, streams: input.stream)
    }

    private static func cells(_ input: Input) throws(BenchError) -> [BenchConfiguration] {
        let concurrency = try concurrencies(input.concurrency)
        if let url = input.url {
            if input.request.shapesRequest, input.scenarios != nil {
                throw .invalidOption("give --scenarios or -X/--data/--data-file, not both: the latter make the one custom scenario")
            }
            let scenarios = try list(
                input.scenarios, option: "--scenarios", default: [input.request.shapesRequest ? Scenario.custom : .get])
            if let bad = scenarios.first(where: { $0 != .get && $0 != .post && $0 != .custom }) {
                throw .invalidOption("with --url, --scenarios takes get or post (\(bad.rawValue) needs the embedded server)")
            }
            if scenarios.contains(.custom), !input.request.shapesRequest {
                throw .invalidOption("--scenarios custom is made by -X, --data or --data-file")
            }
            let secure = url.lowercased().hasPrefix("https:")
            let http = try list(input.http, option: "--http", default: secure ? [HTTPChoice.http1, .http2] : [.http1])
            return cross(scenarios, concurrency ?? [16], http)
        }
        let scenarios = try list(input.scenarios, option: "--scenarios", default: Scenario.embedded)
        if let bad = scenarios.first(where: { $0 == .get || $0 == .custom }) {
            throw .invalidOption(
                "--scenarios \(bad.rawValue) needs --url (the embedded server offers small, medium, large, post, cached, cached-disk)")
        }
        let http = try list(input.http, option: "--http", default: [HTTPChoice.http1, .http2])
        let anyCellOption = input.scenarios != nil || input.concurrency != nil || input.http != nil
        if !input.full && !anyCellOption { return defaultConfigurations }
        let fullConcurrency = [1, 16, 64]
        return cross(
            input.scenarios == nil && !input.full ? [.small] : scenarios,
            concurrency ?? (input.full ? fullConcurrency : [64]), http)
    }

    private static func cross(_ scenarios: [Scenario], _ concurrency: [Int], _ http: [HTTPChoice]) -> [BenchConfiguration] {
        scenarios.flatMap { scenario in
            http.flatMap { version in concurrency.map { BenchConfiguration(scenario: scenario, concurrency: $0, http: version) } }
        }
    }

    private static func concurrencies(_ text: String?) throws(BenchError) -> [Int]? {
        guard let text else { return nil }
        var values: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            guard let value = Int(trimmed), (1...1000).contains(value) else {
                throw .invalidOption("--concurrency takes numbers from 1 to 1000, comma-separated (got \"\(trimmed)\")")
            }
            if !values.contains(value) { values.append(value) }
        }
        return values
    }

    /// Parses a comma-separated list of raw values, rejecting unknown and empty items.
    private static func list<Value: RawRepresentable & CaseIterable>(
        _ text: String?, option: String, default defaults: [Value]
    ) throws(BenchError) -> [Value] where Value.RawValue == String {
        guard let text else { return defaults }
        var values: [Value] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = item.trimmingCharacters(in: .whitespaces).lowercased()
            guard let value = Value(rawValue: name) else {
                let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidOption("\(option): unknown value \"\(name)\" (allowed: \(allowed))")
            }
            if !values.contains(where: { $0.rawValue == value.rawValue }) { values.append(value) }
        }
        return values
    }

    private static func checkURL(_ text: String) throws(BenchError) {
        guard isHTTPURL(text) else {
            throw .invalidOption("--url must be an absolute http:// or https:// URL with a host (got \"\(text)\")")
        }
    }

    /// Whether `text` is an absolute http or https URL with a host: what every command that takes
    /// a URL to measure accepts.
    static func isHTTPURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host
        else { return false }
        return !host.isEmpty
    }
}
