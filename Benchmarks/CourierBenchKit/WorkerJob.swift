/// One measured run, handed from `courier-bench run` to a `courier-bench worker` process as JSON.
public struct WorkerJob: Codable, Sendable, Hashable {
    /// The client to measure.
    public var transport: BenchTransport
    /// The full URL each request goes to.
    public var url: String
    /// What each request sends besides its URL.
    public var request: BenchRequest
    /// The HTTP version.
    public var http: HTTPChoice
    /// Requests in flight at once.
    public var concurrency: Int
    /// Seconds of uncounted load before the counted run.
    public var warmupSeconds: Double
    /// The counted run starts no request after this many seconds.
    public var durationSeconds: Double
    /// The counted run starts at most this many requests (`nil`: only the duration bounds it).
    public var maxRequests: Int?
    /// An extra CA bundle to trust (the embedded server's test CA).
    public var caFile: String?
    /// The CPU the worker pins itself to, if any.
    public var cpu: Int?
    /// The body size the mock transport answers with (the mock does no I/O).
    public var mockResponseBytes: Int
    /// The client's ``ResponseCache``, if any (the `cached` and `cached-disk` scenarios).
    public var cache: Cache?
    /// Requests per second to send in an open loop (`--rate`); `nil` for the closed loop.
    public var rate: Double?
    /// Whether a Courier client reads each body as a stream, counting and dropping its chunks
    /// (`--stream`); the C reference always does.
    public var streams = false

    /// Where a worker's response cache keeps its entries.
    public enum Cache: String, Codable, Sendable, Hashable {
        /// A ``MemoryCacheStore``.
        case memory
        /// A ``DiskCacheStore`` in a temporary directory of the worker's own, removed at the end.
        case disk
    }

    /// Creates a job.
    public init(
        transport: BenchTransport, url: String, request: BenchRequest, http: HTTPChoice, concurrency: Int, warmupSeconds: Double,
        durationSeconds: Double, maxRequests: Int?, caFile: String?, cpu: Int?, mockResponseBytes: Int
    ) {
        self.transport = transport
        self.url = url
        self.request = request
        self.http = http
        self.concurrency = concurrency
        self.warmupSeconds = warmupSeconds
        self.durationSeconds = durationSeconds
        self.maxRequests = maxRequests
        self.caFile = caFile
        self.cpu = cpu
        self.mockResponseBytes = mockResponseBytes
    }
}

/// What a worker measured in its counted run, printed by the worker as one JSON line.
public struct WorkerResult: Codable, Sendable, Equatable {
    /// Requests that succeeded.
    public var completed: Int
    /// Requests that failed (any error, or a non-2xx status).
    public var failed: Int
    /// The first failure, as `kind: message`.
    public var firstError: String?
    /// From the start of the counted run to its last completion.
    public var seconds: Double
    /// The latencies of the successful requests, in microseconds: in a closed loop from each
    /// request's start, in an open loop (``WorkerJob/rate``) from the time it was meant to start.
    public var histogram: LatencyHistogram
    /// User plus system CPU seconds the worker process used during the counted run.
    public var cpuSeconds: Double
    /// The worker process's peak resident set size, in KiB.
    public var peakRSSKiB: Int
    /// Response body bytes received by successful requests.
    public var bytesReceived: Double
    /// Request body bytes sent by successful requests.
    public var bytesSent: Double
    /// The HTTP version the last response came over, as the transport reports it (`1.1`, `2`).
    public var negotiatedHTTP: String?
    /// The CPU the worker ran on, when it pinned itself.
    public var pinnedCPU: Int?

    /// The latency percentiles, in microseconds.
    public var latency: LatencySummary { histogram.summary }

    /// Requests per second (0 for a run without successes).
    public var requestsPerSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
}

/// Latency percentiles, in microseconds.
public struct LatencySummary: Codable, Sendable, Hashable {
    /// The median.
    public var p50: Double
    /// The 90th percentile.
    public var p90: Double
    /// The 99th percentile.
    public var p99: Double
    /// The 99.9th percentile.
    public var p999: Double
    /// The slowest request.
    public var max: Double

    /// Creates a summary.
    public init(p50: Double, p90: Double, p99: Double, p999: Double, max: Double) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
    }

    /// No requests.
    public static let empty = LatencySummary(p50: 0, p90: 0, p99: 0, p999: 0, max: 0)
}
