import Foundation
import Testing

@testable import CourierBenchKit

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("courier-bench's report: the mock on its own scale, latency by percentile, the time left")
struct ReportChartTests {
    /// The `width` of each bar in a rendered bar chart, in order.
    static func barWidths(_ svg: String) -> [Double] {
        svg.split(separator: "\n").filter { $0.hasPrefix("<rect x=") }.compactMap { line in
            guard let start = line.range(of: #"width=""#) else { return nil }
            return Double(line[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    @Test("the mock is drawn on its own scale: the real clients keep the whole width between them")
    func mockApart() {
        let bars = [
            SVGChart.Bar(label: "curl", value: 1000, marked: false), SVGChart.Bar(label: "ahc", value: 500, marked: false),
            SVGChart.Bar(label: "mock", value: 400_000, marked: false, ownScale: true),
        ]
        let svg = SVGChart.render(title: "t", unit: "req/s", groups: [SVGChart.Group(title: "cell", bars: bars)])
        let widths = Self.barWidths(svg)
        #expect(widths.count == 3)
        // curl spans the chart, ahc half of it; the mock spans its own scale, and says so.
        #expect(widths[0] == widths[2] && widths[0] > 600)
        #expect(abs(widths[1] - widths[0] / 2) < 1)
        #expect(svg.contains("400000 req/s (own scale)"))
        // The report's throughput chart marks the mock so, and only the mock.
        var curl = CompareTests.row(.curl, rps: 1000, range: 1000...1000)
        curl.latencyHistogram = nil
        let mock = CompareTests.row(.mock, rps: 400_000, range: 400_000...400_000)
        let files = Self.writtenReport(CompareTests.report([curl, mock]))
        #expect(files["throughput.svg"]?.contains("(own scale)") == true)
        #expect(files["latency-p99.svg"]?.contains("(own scale)") == false)
    }

    @Test("each cell gets a line per client from p50 to p99.99, rising with the percentile, on log axes")
    func percentileCurves() throws {
        var fast = LatencyHistogram()
        var slowTail = LatencyHistogram()
        for index in 1...10_000 {
            fast.record(microseconds: 100 + Double(index % 50))
            // One call in a hundred takes 50 ms: a tail that p50 and p90 do not show.
            slowTail.record(microseconds: index % 100 == 0 ? 50_000 : 120)
        }
        var curl = CompareTests.row(.curl, rps: 1000, range: 1000...1000)
        curl.latencyHistogram = fast
        var ahc = CompareTests.row(.ahc, rps: 800, range: 800...800)
        ahc.latencyHistogram = slowTail
        var failed = CompareTests.row(.urlsession, rps: 0, range: 0...0)
        failed.latencyHistogram = LatencyHistogram()
        let panels = PercentileChart.panels([curl, ahc, failed])
        let panel = try #require(panels.first)
        #expect(panels.count == 1)
        #expect(panel.lines.map(\.label) == ["curl", "ahc"], "a row with no latency draws no line")
        for line in panel.lines {
            #expect(line.milliseconds.count == PercentileChart.percentiles.count)
            #expect(zip(line.milliseconds, line.milliseconds.dropFirst()).allSatisfy { $0 <= $1 })
        }
        let tail = panel.lines[1].milliseconds
        #expect(tail[0] < 0.2 && tail[PercentileChart.percentiles.count - 1] > 40, "the tail shows: \(tail)")
        #expect(abs(PercentileChart.position(99.99) - 4) < 1e-9 && abs(PercentileChart.position(90) - 1) < 1e-9)
        let svg = PercentileChart.render([curl, ahc, failed])
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(svg.contains("p99.99"))
        #expect(Self.writtenReport(CompareTests.report([curl, ahc]))["report.md"]?.contains("latency-percentiles.svg") == true)
    }

    @Test("one 1 µs latency, equal latencies and a cell with only the mock draw finite, well-formed SVG")
    func edgeCases() {
        var single = LatencyHistogram()
        single.record(microseconds: 1)
        var equal = LatencyHistogram()
        for _ in 0..<100 { equal.record(microseconds: 250) }
        var mock = CompareTests.row(.mock, rps: 1_000_000, range: 1_000_000...1_000_000)
        mock.latencyHistogram = single
        var curl = CompareTests.row(.curl, rps: 10, range: 10...10)
        curl.latencyHistogram = equal
        var empty = CompareTests.row(.ahc, rps: 0, range: 0...0)
        empty.latencyHistogram = nil
        for rows in [[mock], [curl], [mock, curl, empty], [empty]] {
            let percentiles = PercentileChart.render(rows)
            let throughput = SVGChart.render(
                title: "t", unit: "req/s",
                groups: [
                    SVGChart.Group(
                        title: "c",
                        bars: rows.map { SVGChart.Bar(label: $0.transport, value: $0.rps, marked: false, ownScale: $0.transport == "mock") }
                    )
                ])
            for svg in [percentiles, throughput] {
                let parser = XMLParser(data: Data(svg.utf8))
                #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
                #expect(!svg.lowercased().contains("nan") && !svg.contains("inf"), "\(svg)")
            }
            #expect(!percentiles.contains(">0 ms<"), "an axis label rounded to 0")
        }
    }

    @Test("the progress line estimates the time left from the pace of the steps done")
    func timeLeft() {
        #expect(Progress.timeLeft(done: 0, total: 10, elapsed: .seconds(5)) == nil)
        #expect(Progress.timeLeft(done: 10, total: 10, elapsed: .seconds(5)) == nil)
        #expect(Progress.timeLeft(done: 2, total: 10, elapsed: .seconds(20)) == "about 80 s left")
        #expect(Progress.timeLeft(done: 1, total: 100, elapsed: .seconds(60)) == "about 99 min left")
        // Steps shorter than a second still count their fractions.
        #expect(Progress.timeLeft(done: 4, total: 104, elapsed: .milliseconds(200)) == "about 5 s left")
    }

    /// The report's files by name, written into a temporary directory.
    static func writtenReport(_ report: BenchReport) -> [String: String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-report-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let paths = try? ReportWriter.writeReport(report, to: directory) else { return [:] }
        var files: [String: String] = [:]
        for path in paths {
            files[(path as NSString).lastPathComponent] = try? String(contentsOfFile: path, encoding: .utf8)
        }
        return files
    }
}
