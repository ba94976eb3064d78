import ArgumentParser
import Foundation
import Testing

@testable import CourierBenchKit

@Suite("courier-bench compare: two stored runs, row by row")
struct CompareTests {
    static let cell = BenchConfiguration(scenario: .small, concurrency: 64, http: .http1)

    static func row(_ transport: BenchTransport, rps: Double, range: ClosedRange<Double>, repeats: Int = 3, p99: Double = 2) -> ResultRow {
        var row = RowBuilder.unsupported(transport, cell, reason: "")
        row.unsupported = nil
        row.repeats = repeats
        row.rps = rps
        row.rpsMin = range.lowerBound
        row.rpsMax = range.upperBound
        row.p99Ms = p99
        row.cpuSecondsPer10k = 0.3
        return row
    }

    static func report(_ rows: [ResultRow], rate: Double? = nil) -> BenchReport {
        BenchReport(
            date: "2026-11-25T00:00:00Z", command: "courier-bench run", cores: 2, placement: "pinned", server: "embedded",
            durationSeconds: 2, warmupSeconds: 0.5, repeats: 3, libcurl: "7.88.1", swift: "6.3.1", commit: "abc", loop: "closed loop",
            rate: rate, limitTools: "none", rows: rows, targets: [])
    }

    /// Writes `report` as `--json` does and returns the path.
    static func store(_ report: BenchReport) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-compare-\(UUID().uuidString).json").path
        try ReportWriter.writeJSON(report, to: path)
        return path
    }

    @Test("rows whose ranges over the repeats overlap are within the noise; the others are better or worse")
    func verdicts() async throws {
        let old = Self.report([
            Self.row(.curl, rps: 30_000, range: 28_000...31_000), Self.row(.reference, rps: 50_000, range: 48_000...52_000),
            Self.row(.ahc, rps: 10_000, range: 9_500...10_500), Self.row(.mock, rps: 300_000, range: 290_000...310_000),
        ])
        let new = Self.report([
            Self.row(.curl, rps: 34_000, range: 33_000...35_000),  // better: 33,000 > 31,000
            Self.row(.reference, rps: 47_000, range: 44_000...49_000),  // overlaps 48,000...52,000
            Self.row(.ahc, rps: 9_000, range: 8_800...9_400),  // worse: 9,400 < 9,500
            Self.row(.urlsession, rps: 3_000, range: 2_900...3_100),  // only in the new run
        ])
        let oldPath = try Self.store(old)
        let newPath = try Self.store(new)
        defer { for path in [oldPath, newPath] { try? FileManager.default.removeItem(atPath: path) } }

        let comparison = Comparison(old: try Comparison.load(oldPath), new: try Comparison.load(newPath))
        #expect(comparison.lines.map(\.transport) == ["curl", "reference", "ahc"])
        #expect(comparison.lines.map(\.verdict) == [.better, .same, .worse])
        #expect(abs(comparison.lines[0].ratio - 34.0 / 30.0) < 1e-9)
        #expect(comparison.onlyOld == ["small · HTTP/1.1 · c64 · mock"])
        #expect(comparison.onlyNew == ["small · HTTP/1.1 · c64 · urlsession"])
        #expect(comparison.hasRegressions)
        #expect(comparison.text.contains("WORSE"))
        #expect(comparison.text.contains("3 rows compared: 1 worse and 1 better"))

        // --strict turns a regression into exit status 1; without it the command only reports.
        let strict = try CompareCommand.parse([oldPath, newPath, "--strict"])
        await #expect(throws: ExitCode(1)) { try await strict.run() }
        let relaxed = try CompareCommand.parse([oldPath, newPath])
        try await relaxed.run()
    }

    @Test("one repeat on a side: a change above 5% counts; open-loop runs are judged by p99")
    func thresholds() {
        let single = Comparison(
            old: Self.report([
                Self.row(.curl, rps: 1000, range: 1000...1000, repeats: 1), Self.row(.mock, rps: 1000, range: 1000...1000, repeats: 1),
            ]),
            new: Self.report([
                Self.row(.curl, rps: 1040, range: 1040...1040, repeats: 1), Self.row(.mock, rps: 940, range: 940...940, repeats: 1),
            ]))
        #expect(single.lines.map(\.verdict) == [.same, .worse])

        let open = Comparison(
            old: Self.report(
                [Self.row(.curl, rps: 500, range: 500...500, p99: 2.0), Self.row(.ahc, rps: 500, range: 500...500, p99: 2.0)], rate: 500),
            new: Self.report(
                [Self.row(.curl, rps: 500, range: 500...500, p99: 1.5), Self.row(.ahc, rps: 500, range: 500...500, p99: 2.1)], rate: 500))
        #expect(open.lines.map(\.verdict) == [.better, .same])
    }

    @Test("files from before reports carried metadata (a bare array of rows) still compare; other files are refused")
    func oldFormatAndErrors() throws {
        let rows = [Self.row(.curl, rps: 1000, range: 900...1100)]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-compare-\(UUID().uuidString).json").path
        try JSONEncoder().encode(rows).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Comparison.load(path).rows == rows)

        #expect {
            try Comparison.load("/no/such/run.json")
        } throws: { error in
            "\(error)".contains("/no/such/run.json: cannot read it")
        }
        let junk = path + ".junk"
        try Data(#"{"rows": 3}"#.utf8).write(to: URL(fileURLWithPath: junk))
        defer { try? FileManager.default.removeItem(atPath: junk) }
        #expect {
            try Comparison.load(junk)
        } throws: { error in
            "\(error)".contains("not a courier-bench --json file")
        }
    }
}
