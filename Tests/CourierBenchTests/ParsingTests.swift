import Testing

@testable import CourierBenchKit

@Suite("courier-bench: limit tools' output, medians and ratios")
struct ParsingTests {
    @Test("wrk's summary: requests, seconds, errors and latency percentiles")
    func wrk() {
        let output = """
            Running 2s test @ http://127.0.0.1:40000/bytes/100
              1 threads and 64 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency     1.02ms  200.00us   5.00ms   90.00%
              Latency Distribution
                 50%  512.00us
                 75%    1.00ms
                 90%    1.50ms
                 99%    3.00ms
              120000 requests in 2.00s, 20.00MB read
              Socket errors: connect 0, read 2, write 0, timeout 1
              Non-2xx or 3xx responses: 7
            Requests/sec:  60000.00
            """
        let measurement = LimitTools.parseWrk(output)
        #expect(measurement.tool == "wrk")
        #expect(measurement.failed == 10)
        #expect(measurement.completed == 120_000 - 10)
        #expect(abs(measurement.seconds - 2) < 1e-9)
        #expect(measurement.latency.map { abs($0.p50 - 512) < 1e-6 } == true)
        #expect(measurement.latency.map { abs($0.p99 - 3000) < 1e-6 } == true)
        #expect(measurement.firstError != nil)
    }

    @Test("h2load's summary: succeeded, failed and the time")
    func h2load() {
        let output = """
            finished in 2.00s, 45000.00 req/s, 5.00MB/s
            requests: 90010 total, 90074 started, 90010 done, 90000 succeeded, 10 failed, 10 errored, 0 timeout
            status codes: 90000 2xx, 0 3xx, 0 4xx, 0 5xx
            """
        let measurement = LimitTools.parseH2load(output)
        #expect(measurement.completed == 90_000)
        #expect(measurement.failed == 10)
        #expect(measurement.requestsPerSecond == 45_000)
        #expect(measurement.firstError != nil)
    }

    @Test("durations with units", arguments: [("512.00us", 0.000512), ("1.50ms", 0.0015), ("2.00s", 2.0), ("1.5m", 90.0), ("3", 3.0)])
    func units(text: String, seconds: Double) {
        #expect(LimitTools.seconds(text).map { abs($0 - seconds) < 1e-9 } == true)
    }

    @Test("the median run, min and max, and ratios within a cell")
    func rows() {
        let cell = BenchConfiguration(scenario: .small, concurrency: 64, http: .http1)
        func run(_ completed: Int, failed: Int = 0) -> WorkerResult {
            var histogram = LatencyHistogram()
            for _ in 0..<completed { histogram.record(microseconds: 3000) }
            return WorkerResult(
                completed: completed, failed: failed, firstError: failed > 0 ? "timed_out: slow" : nil, seconds: 1,
                histogram: histogram, cpuSeconds: 0.5, peakRSSKiB: completed, bytesReceived: 100, bytesSent: 0, negotiatedHTTP: "1.1",
                pinnedCPU: nil)
        }
        var rows = [
            RowBuilder.row(.curl, cell, runs: [run(300), run(100), run(200, failed: 2)]),
            RowBuilder.row(.reference, cell, runs: [run(400)]),
            RowBuilder.row(.mock, cell, runs: [run(4000)]),
            RowBuilder.unsupported(.urlsession, cell, reason: "no"),
        ]
        RowBuilder.addRatios(&rows)
        #expect(rows[0].rps == 200)
        #expect(rows[0].rpsMin == 100)
        #expect(rows[0].rpsMax == 300)
        #expect(rows[0].errors == 2)
        #expect(rows[0].hasErrors)
        #expect(rows[0].p99Ms == 3)
        #expect(rows[0].latencyHistogram?.count == 600)  // every run's requests, merged
        #expect(rows[0].cpuSecondsPer10k == 25)
        #expect(rows[0].peakRSSMiB == 300.0 / 1024)
        #expect(rows[0].ratioToReference == 0.5)
        #expect(rows[0].ratioToFastest == 0.5)  // the mock is not a candidate for fastest
        #expect(rows[1].ratioToFastest == 1)
        #expect(rows[2].ratioToFastest == nil)
        #expect(rows[3].repeats == 0 && rows[3].ratioToReference == nil)
    }

    @Test("latency percentiles come from the histogram")
    func recorder() {
        var histogram = LatencyHistogram()
        for microseconds in 1...1000 { histogram.record(microseconds: Double(microseconds)) }
        let summary = histogram.summary
        #expect(abs(summary.p50 - 500) <= 1)
        #expect(abs(summary.p99 - 990) <= 1)
        #expect(summary.max == 1000)
        #expect(LatencyHistogram().summary == .empty)
    }

    @Test("targets: met and missed, and only where both sides ran cleanly")
    func targets() {
        let cell = BenchConfiguration(scenario: .small, concurrency: 64, http: .http1)
        func row(_ transport: BenchTransport, rps: Double, cpuMicroseconds: Double = 20, errors: Int = 0) -> ResultRow {
            var row = RowBuilder.unsupported(transport, cell, reason: "")
            row.unsupported = nil
            row.repeats = 1
            row.rps = rps
            row.errors = errors
            row.cpuSecondsPer10k = cpuMicroseconds / 100
            return row
        }
        let checks = TargetCheck.check(
            [
                row(.curl, rps: 760, cpuMicroseconds: 29), row(.curlEngine, rps: 790, cpuMicroseconds: 25), row(.reference, rps: 1000),
                row(.ahc, rps: 250), row(.urlsession, rps: 40, errors: 1), row(.mock, rps: 790_000),
            ],
            pinned: true, libcurlMajor: 7)
        #expect(
            checks.map(\.target) == [
                "curl-engine CPU per call above the C reference ≤ 3 µs", "curl-engine ≥ 0.80× the C reference",
                "curl CPU per call above the C reference ≤ 5 µs", "curl ≥ 0.75× the C reference", "curl ≥ 3× AsyncHTTPClient",
                "mock ≥ 800,000 calls/s on one core",
            ])
        #expect(checks.map(\.met) == [false, false, false, true, true, false])
        #expect(checks[0].measuredText == "5.0 µs" && checks[0].requiredText == "≤ 3.0 µs")
        #expect(checks[1].measuredText == "0.79×" && checks[1].requiredText == "≥ 0.80×")

        // The open loop: only CPU (and memory) can be compared, every client sent as many requests.
        let open = TargetCheck.check(
            [row(.curl, rps: 500, cpuMicroseconds: 27), row(.reference, rps: 500)], pinned: true, libcurlMajor: 8, openLoop: true)
        #expect(open.map(\.target) == ["curl CPU per call above the C reference ≤ 5 µs"])
        #expect(open.first?.met == false)

        // HTTP/2 with TLS (any libcurl) and h2c (libcurl 8 only).
        for (http, major, expected) in [(HTTPChoice.http2, 7, 1), (.h2c, 7, 0), (.h2c, 8, 1)] {
            let h2 = BenchConfiguration(scenario: .small, concurrency: 64, http: http)
            func h2Row(_ transport: BenchTransport, rps: Double) -> ResultRow {
                var row = RowBuilder.unsupported(transport, h2, reason: "")
                row.unsupported = nil
                row.repeats = 1
                row.rps = rps
                return row
            }
            let shares = TargetCheck.check([h2Row(.curl, rps: 860), h2Row(.reference, rps: 1000)], pinned: true, libcurlMajor: major)
                .filter { $0.unit == .ratio }
            #expect(shares.count == expected && shares.allSatisfy(\.met) && shares.allSatisfy { $0.required == 0.85 })
        }
    }

    @Test("the memory target compares peak RSS with the reference's at 64 concurrent 1 MiB downloads")
    func memoryTarget() {
        let cell = BenchConfiguration(scenario: .large, concurrency: 64, http: .http1)
        func row(_ transport: BenchTransport, rss: Double) -> ResultRow {
            var row = RowBuilder.unsupported(transport, cell, reason: "")
            row.unsupported = nil
            row.repeats = 1
            row.rps = 100
            row.peakRSSMiB = rss
            return row
        }
        let rows = [row(.curl, rss: 120), row(.curlEngine, rss: 100), row(.reference, rss: 90)]
        let checks = TargetCheck.check(rows, pinned: false, libcurlMajor: 8, streamed: true)
        let memory = checks.filter { $0.unit == .mebibytes }
        #expect(
            memory.map(\.target) == [
                "curl-engine peak RSS ≤ the C reference's + 16 MiB, streamed", "curl peak RSS ≤ the C reference's + 16 MiB, streamed",
            ])
        #expect(memory.map(\.met) == [true, false])
        #expect(memory.map(\.measured) == [10, 30])
        // Buffered bodies are held whole: the memory target is for streamed reads only.
        #expect(TargetCheck.check(rows, pinned: false, libcurlMajor: 8).allSatisfy { $0.unit != .mebibytes })
        // Both rates count against the 1 MiB download share (same rps here: met).
        let large = checks.filter { $0.target.hasSuffix("1 MiB downloads") }
        #expect(large.count == 2 && large.allSatisfy(\.met))
    }
}
