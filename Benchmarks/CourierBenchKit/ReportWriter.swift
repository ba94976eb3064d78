import Foundation

/// Writes `--json FILE` and `--report DIR` (report.md, throughput.svg, latency-p99.svg,
/// latency-percentiles.svg).
public enum ReportWriter {
    /// The whole report as JSON: the run's metadata, the rows (each with its merged latency
    /// histogram) and the targets; `courier-bench compare` reads it back.
    public static func json(_ report: BenchReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }

    /// Writes the report as JSON to `path`.
    public static func writeJSON(_ report: BenchReport, to path: String) throws(BenchError) {
        do {
            try json(report).write(to: URL(fileURLWithPath: path))
        } catch {
            throw .file("could not write \(path): \(error)")
        }
    }

    /// Writes the Markdown report and its two charts into `directory` (created if needed).
    /// - Returns: The paths written.
    @discardableResult
    public static func writeReport(_ report: BenchReport, to directory: String) throws(BenchError) -> [String] {
        let files = [
            ("report.md", markdown(report)),
            (
                "throughput.svg",
                chart(report, title: "Requests per second (higher is better; the mock on its own scale)", unit: "req/s", mockApart: true) {
                    $0.rps
                }
            ),
            ("latency-p99.svg", chart(report, title: "p99 latency in ms (lower is better)", unit: "ms") { $0.p99Ms }),
            ("latency-percentiles.svg", PercentileChart.render(report.rows)),
        ]
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var written: [String] = []
            for (name, text) in files {
                let path = (directory as NSString).appendingPathComponent(name)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                written.append(path)
            }
            return written
        } catch {
            throw .file("could not write the report into \(directory): \(error)")
        }
    }

    /// The report as Markdown.
    public static func markdown(_ report: BenchReport) -> String {
        var lines = [
            "# courier-bench results",
            "",
            "- Date: \(report.date)",
            "- Command: `\(report.command)`",
            "- Machine: \(report.cores) CPUs; \(report.placement)",
            "- Server: \(report.server)",
            "- Each configuration: \(report.repeats) runs of \(report.durationSeconds) s after \(report.warmupSeconds) s of warm-up; median shown with min–max",
            "- libcurl \(report.libcurl); Swift \(report.swift); commit \(report.commit); limit tools: \(report.limitTools)",
            "- Load: \(report.loop)",
            "",
            "![Requests per second](throughput.svg)",
            "",
            "![p99 latency](latency-p99.svg)",
            "",
            "![Latency by percentile](latency-percentiles.svg)",
            "",
            "## Results",
            "",
            TableRenderer.markdown(report.rows),
            "",
            "`!` marks a row with errors. `×ref` is requests/s ÷ the C reference's, `×fastest` ÷ the fastest client's",
            "(the mock and the limit tools excluded), `×limit` ÷ wrk's or h2load's, all in the same cell of the same run.",
            "",
            "## Targets",
            "",
        ]
        if report.targets.isEmpty {
            lines.append("No target could be checked: the run had no cell where both sides ran without errors.")
        } else {
            lines.append("| target | cell | measured | needed | result |")
            lines.append("| --- | --- | --- | --- | --- |")
            for check in report.targets {
                lines.append(
                    "| \(check.target) | \(check.cell) | \(check.measuredText) | \(check.requiredText) | \(check.met ? "met" : "**missed**") |"
                )
            }
        }
        let errors = report.rows.filter(\.hasErrors)
        if !errors.isEmpty {
            lines += ["", "## Errors", ""]
            for row in errors {
                lines.append(
                    "- \(row.transport), \(row.scenario) · HTTP/\(row.http) · c\(row.concurrency): \(row.errors) failed; first: \(row.firstError ?? "?")"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func chart(
        _ report: BenchReport, title: String, unit: String, mockApart: Bool = false, value: (ResultRow) -> Double?
    ) -> String {
        var groups: [SVGChart.Group] = []
        for row in report.rows where row.repeats > 0 {
            let title = row.cellTitle
            let bar = SVGChart.Bar(
                label: row.transport, value: value(row) ?? .nan, marked: row.hasErrors, ownScale: mockApart && row.transport == "mock")
            if groups.last?.title == title {
                groups[groups.count - 1].bars.append(bar)
            } else {
                groups.append(SVGChart.Group(title: title, bars: [bar]))
            }
        }
        return SVGChart.render(title: title, unit: unit, groups: groups)
    }
}
