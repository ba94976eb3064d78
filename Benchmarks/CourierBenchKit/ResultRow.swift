/// One line of the results: a client in a matrix cell, over the repeated runs.
///
/// Encoded to JSON with the snake_case keys below (`--json FILE` writes an array of these).
public struct ResultRow: Codable, Sendable, Equatable {
    /// `curl`, `urlsession`, `ahc`, `mock`, `reference`, or a limit tool (`wrk`, `h2load`).
    public var transport: String
    /// The scenario's name.
    public var scenario: String
    /// `1.1`, `2` or `h2c`.
    public var http: String
    /// Requests in flight at once.
    public var concurrency: Int
    /// Runs measured (0 when unsupported).
    public var repeats: Int
    /// Successful requests in the median run.
    public var requests: Int
    /// Failed requests over all runs; any failure marks the row.
    public var errors: Int
    /// Requests per second of the median run.
    public var rps: Double
    /// The slowest run's requests per second.
    public var rpsMin: Double
    /// The fastest run's requests per second.
    public var rpsMax: Double
    /// Latency percentiles over every run's requests merged, in milliseconds (the limit tools: of
    /// their median run; `nil` where the tool reports none).
    public var p50Ms: Double?
    public var p90Ms: Double?
    public var p99Ms: Double?
    public var p999Ms: Double?
    public var maxMs: Double?
    /// User plus system CPU seconds of the client process per 10,000 requests (median run).
    public var cpuSecondsPer10k: Double?
    /// The client process's peak resident memory, in MiB (largest over the runs).
    public var peakRSSMiB: Double?
    /// Body bytes sent and received in the median run.
    public var bytes: Double
    /// The HTTP version responses came over, as the client reports it.
    public var negotiatedHTTP: String?
    /// `rps` ÷ the C reference's in the same cell.
    public var ratioToReference: Double?
    /// `rps` ÷ the fastest client's in the same cell (the mock and the limit tools excluded).
    public var ratioToFastest: Double?
    /// `rps` ÷ wrk's or h2load's in the same cell.
    public var ratioToLimit: Double?
    /// Why this client did not run in this cell.
    public var unsupported: String?
    /// The first failure's text.
    public var firstError: String?
    /// Every run's latencies merged (microseconds; Courier's clients and the C reference).
    public var latencyHistogram: LatencyHistogram?

    enum CodingKeys: String, CodingKey {
        case transport, scenario, http, concurrency, repeats, requests, errors, rps
        case rpsMin = "rps_min"
        case rpsMax = "rps_max"
        case p50Ms = "p50_ms"
        case p90Ms = "p90_ms"
        case p99Ms = "p99_ms"
        case p999Ms = "p999_ms"
        case maxMs = "max_ms"
        case cpuSecondsPer10k = "cpu_seconds_per_10k"
        case peakRSSMiB = "peak_rss_mib"
        case bytes
        case negotiatedHTTP = "negotiated_http"
        case ratioToReference = "ratio_to_reference"
        case ratioToFastest = "ratio_to_fastest"
        case ratioToLimit = "ratio_to_limit"
        case unsupported
        case firstError = "first_error"
        case latencyHistogram = "latency_histogram"
    }

    /// The cell this row belongs to.
    var cellKey: String { "\(scenario)|\(http)|\(concurrency)" }

    /// The cell as the charts title it: `small · HTTP/1.1 · c64`.
    var cellTitle: String { "\(scenario) · HTTP/\(http) · c\(concurrency)" }
    /// Whether the row is a limit tool's.
    var isLimit: Bool { transport == "wrk" || transport == "h2load" }
    /// Client CPU microseconds per request (median run).
    var cpuMicrosecondsPerCall: Double? { cpuSecondsPer10k.map { $0 * 100 } }
    /// Whether any request failed.
    public var hasErrors: Bool { errors > 0 }
}
