import Foundation

/// The results as aligned text (the terminal) or as a Markdown table (the report).
enum TableRenderer {
    static let headers = [
        "cell", "client", "req/s (min–max)", "p50", "p90", "p99", "p99.9", "max", "CPU s/10k", "RSS MiB", "×ref",
        "×fastest", "×limit", "errors",
    ]

    /// The cells of one row, as text.
    static func cells(_ row: ResultRow) -> [String] {
        let cell = "\(row.scenario) · HTTP/\(row.http) · c\(row.concurrency)"
        let client = row.transport + (row.hasErrors ? " !" : "")
        if let reason = row.unsupported {
            return [cell, client, "unsupported: \(reason)"] + Array(repeating: "", count: headers.count - 3)
        }
        func number(_ value: Double?, _ digits: Int = 2) -> String {
            guard let value, value.isFinite else { return "–" }
            return String(format: "%.\(digits)f", value)
        }
        func ratio(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "–" }
        func latency(_ value: Double?) -> String { value.map(Self.latency) ?? "–" }
        let rate = "\(Int(row.rps.rounded())) (\(Int(row.rpsMin.rounded()))–\(Int(row.rpsMax.rounded())))"
        return [
            cell, client, rate, latency(row.p50Ms), latency(row.p90Ms), latency(row.p99Ms), latency(row.p999Ms), latency(row.maxMs),
            number(row.cpuSecondsPer10k), number(row.peakRSSMiB, 1), ratio(row.ratioToReference), ratio(row.ratioToFastest),
            ratio(row.ratioToLimit), String(row.errors),
        ]
    }

    /// A latency given in milliseconds, as text: microseconds below a millisecond (`850 µs`),
    /// milliseconds above (`1.25 ms`), `–` when unknown.
    static func latency(_ milliseconds: Double) -> String {
        guard milliseconds.isFinite else { return "–" }
        if milliseconds < 1 { return "\(Int((milliseconds * 1000).rounded())) µs" }
        return String(format: milliseconds < 100 ? "%.2f ms" : "%.1f ms", milliseconds)
    }

    /// Aligned columns for a terminal.
    static func text(_ rows: [ResultRow]) -> String {
        let table = [headers] + rows.map(cells)
        var widths = Array(repeating: 0, count: headers.count)
        for line in table where line.count == headers.count {
            for (index, cell) in line.enumerated() where !(line[2].hasPrefix("unsupported") && index == 2) {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return table.map { line in
            line.enumerated().map { index, cell in
                index == line.count - 1 ? cell : cell.padding(toLength: max(widths[index], cell.count), withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    /// A Markdown table.
    static func markdown(_ rows: [ResultRow]) -> String {
        let escape = { (text: String) in text.replacingOccurrences(of: "|", with: "\\|") }
        var lines = ["| " + headers.joined(separator: " | ") + " |", "|" + String(repeating: " --- |", count: headers.count)]
        for row in rows { lines.append("| " + cells(row).map(escape).joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n")
    }

    /// The targets as lines of text.
    static func targets(_ checks: [TargetCheck]) -> [String] {
        checks.map { "\($0.met ? "met   " : "MISSED") \($0.target) — \($0.cell): \($0.measuredText) (needed \($0.requiredText))" }
    }
}
