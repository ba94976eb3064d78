/// Turns repeated runs into rows: the median run by requests/s, min and max, the latencies of
/// every run merged, then the ratios.
enum RowBuilder {
    /// A row from a Courier or reference worker's runs.
    static func row(_ transport: BenchTransport, _ cell: BenchConfiguration, runs: [WorkerResult]) -> ResultRow {
        var row = empty(transport.rawValue, cell)
        guard let median = median(runs, by: \.requestsPerSecond) else { return row }
        fillCounts(&row, median: (median.completed, median.requestsPerSecond), runs: runs.map { ($0.failed, $0.requestsPerSecond) })
        // Percentiles of every run's requests together, not of one run: a tail that shows in one
        // repeat of three is still a tail.
        let latency = LatencyHistogram.merged(runs.map(\.histogram))
        if latency.count > 0 {
            let summary = latency.summary
            row.p50Ms = summary.p50 / 1000
            row.p90Ms = summary.p90 / 1000
            row.p99Ms = summary.p99 / 1000
            row.p999Ms = summary.p999 / 1000
            row.maxMs = summary.max / 1000
            row.latencyHistogram = latency
        }
        if median.completed > 0 {
            row.cpuSecondsPer10k = median.cpuSeconds / Double(median.completed) * 10_000
        }
        row.peakRSSMiB = Double(runs.map(\.peakRSSKiB).max() ?? 0) / 1024
        row.bytes = median.bytesReceived + median.bytesSent
        row.negotiatedHTTP = median.negotiatedHTTP
        row.firstError = runs.lazy.compactMap(\.firstError).first
        return row
    }

    /// A row from a limit tool's runs.
    static func row(limit runs: [LimitTools.Measurement], _ cell: BenchConfiguration) -> ResultRow? {
        guard let median = median(runs, by: \.requestsPerSecond) else { return nil }
        var row = empty(median.tool, cell)
        fillCounts(&row, median: (median.completed, median.requestsPerSecond), runs: runs.map { ($0.failed, $0.requestsPerSecond) })
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 / 1000 : nil } }
        row.p50Ms = finite(median.latency?.p50)
        row.p90Ms = finite(median.latency?.p90)
        row.p99Ms = finite(median.latency?.p99)
        row.firstError = runs.lazy.compactMap(\.firstError).first
        return row
    }

    /// A row for a client that cannot run in the cell.
    static func unsupported(_ transport: BenchTransport, _ cell: BenchConfiguration, reason: String) -> ResultRow {
        var row = empty(transport.rawValue, cell)
        row.unsupported = reason
        return row
    }

    /// Fills each row's ratios from the other rows of its cell.
    static func addRatios(_ rows: inout [ResultRow]) {
        var reference: [String: Double] = [:]
        var fastest: [String: Double] = [:]
        var limit: [String: Double] = [:]
        for row in rows where row.repeats > 0 && row.rps > 0 {
            if row.transport == BenchTransport.reference.rawValue { reference[row.cellKey] = row.rps }
            if row.isLimit { limit[row.cellKey] = row.rps }
            if !row.isLimit, row.transport != BenchTransport.mock.rawValue {
                fastest[row.cellKey] = max(fastest[row.cellKey] ?? 0, row.rps)
            }
        }
        for index in rows.indices where rows[index].repeats > 0 && rows[index].rps > 0 {
            let key = rows[index].cellKey
            let rps = rows[index].rps
            rows[index].ratioToReference = reference[key].map { rps / $0 }
            rows[index].ratioToLimit = limit[key].map { rps / $0 }
            if !rows[index].isLimit, rows[index].transport != BenchTransport.mock.rawValue {
                rows[index].ratioToFastest = fastest[key].map { $0 > 0 ? rps / $0 : 0 }
            }
        }
    }

    /// Repeats, the median run's requests and rate, all runs' errors, and the rate's min and max.
    private static func fillCounts(
        _ row: inout ResultRow, median: (completed: Int, rps: Double), runs: [(failed: Int, rps: Double)]
    ) {
        row.repeats = runs.count
        row.requests = median.completed
        row.errors = runs.reduce(0) { $0 + $1.failed }
        row.rps = median.rps
        row.rpsMin = runs.map(\.rps).min() ?? 0
        row.rpsMax = runs.map(\.rps).max() ?? 0
    }

    private static func empty(_ transport: String, _ cell: BenchConfiguration) -> ResultRow {
        ResultRow(
            transport: transport, scenario: cell.scenario.rawValue, http: cell.http.rawValue, concurrency: cell.concurrency,
            repeats: 0, requests: 0, errors: 0, rps: 0, rpsMin: 0, rpsMax: 0, bytes: 0)
    }

    /// The middle run by `key` (the upper middle of an even count).
    static func median<Run>(_ runs: [Run], by key: (Run) -> Double) -> Run? {
        guard !runs.isEmpty else { return nil }
        return runs.sorted { key($0) < key($1) }[runs.count / 2]
    }
}
