import Foundation

/// `courier-bench compare OLD.json NEW.json`: each row of the new run beside the same row of the
/// old one (same client, scenario, HTTP version and concurrency).
///
/// A closed-loop row is judged by requests per second. With two or more repeats on both sides a
/// change counts only when the two runs' ranges (slowest to fastest repeat) do not overlap: the
/// repeats are the noise. With a single repeat on either side, a change of more than 5% counts.
/// Open-loop runs (`--rate`) send the same number of requests whatever the client, so their rows
/// are judged by p99 latency instead, with a 10% threshold.
public struct Comparison: Sendable, Equatable {
    /// One row of both runs.
    public struct Line: Sendable, Equatable {
        /// `small · HTTP/1.1 · c64`.
        public var cell: String
        /// The client.
        public var transport: String
        /// The old and new requests per second (median runs).
        public var oldRPS: Double
        public var newRPS: Double
        /// The old and new p99, in milliseconds, when both have one.
        public var oldP99Ms: Double?
        public var newP99Ms: Double?
        /// The old and new client CPU microseconds per call, when both have one.
        public var oldCPU: Double?
        public var newCPU: Double?
        /// What changed, beyond the noise.
        public var verdict: Verdict

        /// New requests per second ÷ old.
        public var ratio: Double { oldRPS > 0 ? newRPS / oldRPS : .nan }
    }

    /// What a line's change amounts to.
    public enum Verdict: String, Sendable, Equatable {
        /// Better beyond the noise.
        case better
        /// Worse beyond the noise.
        case worse
        /// Within the noise.
        case same
    }

    /// The rows both runs have.
    public var lines: [Line]
    /// Rows only the old run has, and only the new one has, as `cell · client`.
    public var onlyOld: [String]
    public var onlyNew: [String]

    /// The single-repeat threshold for requests per second.
    static let singleRunThreshold = 0.05
    /// The open loop's threshold for p99.
    static let latencyThreshold = 0.10

    /// Compares two reports.
    public init(old: BenchReport, new: BenchReport) {
        let openLoop = old.rate != nil && new.rate != nil
        func key(_ row: ResultRow) -> String { "\(row.scenario) · HTTP/\(row.http) · c\(row.concurrency) · \(row.transport)" }
        let measured = { (rows: [ResultRow]) in rows.filter { $0.repeats > 0 && $0.unsupported == nil } }
        let oldRows = Dictionary(measured(old.rows).map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
        let newRows = measured(new.rows)
        lines = newRows.compactMap { row in
            guard let before = oldRows[key(row)] else { return nil }
            return Line(
                cell: "\(row.scenario) · HTTP/\(row.http) · c\(row.concurrency)", transport: row.transport, oldRPS: before.rps,
                newRPS: row.rps,
                oldP99Ms: before.p99Ms, newP99Ms: row.p99Ms, oldCPU: before.cpuMicrosecondsPerCall, newCPU: row.cpuMicrosecondsPerCall,
                verdict: openLoop ? Self.latencyVerdict(before, row) : Self.rateVerdict(before, row))
        }
        let newKeys = Set(newRows.map(key))
        onlyOld = measured(old.rows).map(key).filter { !newKeys.contains($0) }
        onlyNew = newRows.map(key).filter { oldRows[$0] == nil }
    }

    private static func rateVerdict(_ old: ResultRow, _ new: ResultRow) -> Verdict {
        guard old.rps > 0, new.rps > 0 else { return .same }
        if old.repeats >= 2, new.repeats >= 2 {
            if new.rpsMin > old.rpsMax { return .better }
            if new.rpsMax < old.rpsMin { return .worse }
            return .same
        }
        let ratio = new.rps / old.rps
        return ratio > 1 + singleRunThreshold ? .better : ratio < 1 - singleRunThreshold ? .worse : .same
    }

    private static func latencyVerdict(_ old: ResultRow, _ new: ResultRow) -> Verdict {
        guard let before = old.p99Ms, let after = new.p99Ms, before > 0 else { return .same }
        let ratio = after / before
        return ratio < 1 - latencyThreshold ? .better : ratio > 1 + latencyThreshold ? .worse : .same
    }

    /// Whether any row got worse beyond the noise.
    public var hasRegressions: Bool { lines.contains { $0.verdict == .worse } }

    /// The comparison as aligned text.
    public var text: String {
        let headers = ["cell", "client", "old req/s", "new req/s", "new ÷ old", "p99 old → new", "CPU µs/call old → new", ""]
        func pair(_ old: Double?, _ new: Double?, _ format: (Double) -> String) -> String {
            guard let old, let new else { return "–" }
            return "\(format(old)) → \(format(new))"
        }
        let table =
            [headers]
            + lines.map { line in
                [
                    line.cell, line.transport, "\(Int(line.oldRPS.rounded()))", "\(Int(line.newRPS.rounded()))",
                    String(format: "%.3f", line.ratio), pair(line.oldP99Ms, line.newP99Ms, TableRenderer.latency),
                    pair(line.oldCPU, line.newCPU) { String(format: "%.1f", $0) },
                    line.verdict == .better ? "better" : line.verdict == .worse ? "WORSE" : "",
                ]
            }
        var widths = Array(repeating: 0, count: headers.count)
        for row in table { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        var text = table.map { row in
            row.enumerated().map { index, cell in cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        if !onlyOld.isEmpty { text.append("only in the old run: " + onlyOld.joined(separator: "; ")) }
        if !onlyNew.isEmpty { text.append("only in the new run: " + onlyNew.joined(separator: "; ")) }
        let worse = lines.filter { $0.verdict == .worse }.count
        let better = lines.filter { $0.verdict == .better }.count
        text.append("\(lines.count) rows compared: \(worse) worse and \(better) better beyond the noise of the repeats.")
        return text.joined(separator: "\n")
    }

    /// Reads a `--json` file: a whole report, or (from before reports carried their metadata) an
    /// array of rows.
    /// - Throws: ``BenchError/file(_:)`` naming the file and what is wrong with it.
    public static func load(_ path: String) throws(BenchError) -> BenchReport {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .file("\(path): cannot read it (\(error.localizedDescription))")
        }
        if let report = try? JSONDecoder().decode(BenchReport.self, from: data) { return report }
        do {
            let rows = try JSONDecoder().decode([ResultRow].self, from: data)
            return BenchReport(
                date: "", command: "", cores: 0, placement: "", server: "", durationSeconds: 0, warmupSeconds: 0, repeats: 0,
                libcurl: "", swift: "", commit: "", loop: "", rate: nil, limitTools: "", rows: rows, targets: [])
        } catch {
            throw .file("\(path): not a courier-bench --json file (\(error))")
        }
    }
}
