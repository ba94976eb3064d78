import ArgumentParser
import CourierTestServer
import Foundation
import Testing

@testable import CourierBenchKit

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Runs the real tool: the embedded server, one worker process per client, the C reference. These
/// tests check that the tool works, not how fast anything is.
@Suite("courier-bench: a tiny run of every client", .serialized, .timeLimit(.minutes(5)))
struct TinyRunTests {
    /// The courier-bench executable `swift build --build-tests` put beside this test binary.
    static func executable() throws -> String {
        try #require(
            ChildProcess.sibling(named: "courier-bench"), "build courier-bench first: COURIER_DEVELOPMENT=1 swift build --build-tests")
    }

    /// The clients this build links (AsyncHTTPClient needs the package trait the test command turns on).
    static let linked = BenchTransport.allCases.filter(TransportFactory.isLinked)

    static func tinyPlan(_ extra: [String] = []) throws -> RunPlan {
        try RunCommand.parse(
            [
                "--transports", linked.map(\.rawValue).joined(separator: ","), "--scenarios", "small,post,cached,cached-disk", "--http",
                "1.1",
                "--concurrency", "4", "--requests", "200", "--warmup", "0", "--repeat", "1", "--no-limit",
            ]
                + extra
        ).plan()
    }

    @Test("every client completes its requests without errors; the JSON rows match the schema; the report is written")
    func tinyRun() async throws {
        let plan = try Self.tinyPlan()
        let report = try await BenchRunner(plan: plan, executable: try Self.executable(), commandLine: "test", showsProgress: false).run()

        #expect(report.rows.count == 4 * Self.linked.count)
        for row in report.rows {
            #expect(row.unsupported == nil, "\(row.transport): \(row.unsupported ?? "")")
            #expect(row.repeats == 1)
            #expect(row.requests == 200, "\(row.transport) \(row.scenario): \(row.requests) requests")
            #expect(row.errors == 0, "\(row.transport) \(row.scenario): \(row.firstError ?? "")")
            #expect(row.rps > 0)
            #expect((row.p50Ms ?? 0) > 0 && (row.p50Ms ?? 0) <= (row.p99Ms ?? 0) && (row.p99Ms ?? 0) <= (row.maxMs ?? 0))
            #expect((row.cpuSecondsPer10k ?? 0) > 0)
            #expect((row.peakRSSMiB ?? 0) > 1)
            #expect(row.bytes > 0)
        }
        for row in report.rows where row.scenario == "small" && row.transport != "mock" {
            #expect(row.bytes == 200 * 100, "\(row.transport) received \(row.bytes) bytes")
            #expect(row.negotiatedHTTP == nil || row.negotiatedHTTP == "1.1")
        }
        for row in report.rows where row.transport == "reference" { #expect(row.ratioToReference == 1) }

        // JSON: the run's metadata, then one object per row with the documented keys and types.
        let json = try ReportWriter.json(report)
        let document = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        for key in ["date", "command", "commit", "swift", "libcurl", "loop"] { #expect(document[key] is String, "\(key)") }
        #expect(document["cores"] as? Int == ProcessUsage.onlineCPUs)
        let objects = try #require(document["rows"] as? [[String: Any]])
        #expect(objects.count == report.rows.count)
        for object in objects {
            let histogram = try #require(object["latency_histogram"] as? [String: Any], "\(object["transport"] ?? "?")")
            #expect(histogram["count"] as? Int == object["requests"] as? Int)
        }
        let numbers = [
            "concurrency", "requests", "errors", "rps", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "cpu_seconds_per_10k",
            "peak_rss_mib", "ratio_to_reference",
        ]
        for object in objects {
            for key in ["transport", "scenario", "http"] { #expect(object[key] is String, "\(key)") }
            for key in numbers { #expect(object[key] is NSNumber, "\(key) in \(object["transport"] ?? "?")") }
        }

        // The report: Markdown and three SVG charts that parse as XML, the percentile curves drawn
        // from the run's own histograms.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-report-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written = try ReportWriter.writeReport(report, to: directory)
        #expect(
            written.map { ($0 as NSString).lastPathComponent } == [
                "report.md", "throughput.svg", "latency-p99.svg", "latency-percentiles.svg",
            ])
        let markdown = try String(contentsOfFile: written[0], encoding: .utf8)
        #expect(markdown.contains("## Targets"))
        #expect(markdown.contains("| small · HTTP/1.1 · c4 | curl |"))
        for svg in written.dropFirst() {
            let data = try Data(contentsOf: URL(fileURLWithPath: svg))
            let parser = XMLParser(data: data)
            #expect(parser.parse(), "\(svg): \(parser.parserError.map { "\($0)" } ?? "")")
            #expect(String(decoding: data, as: UTF8.self).contains("<rect"))
            if svg.hasSuffix("latency-percentiles.svg") { #expect(String(decoding: data, as: UTF8.self).contains("<polyline")) }
        }
    }

    @Test("--rate: every client and the C reference send rate × duration requests in an open loop")
    func openLoopRun() async throws {
        let clients = Self.linked.filter { [.curl, .mock, .reference].contains($0) }.map(\.rawValue).joined(separator: ",")
        let plan = try RunCommand.parse([
            "--transports", clients, "--scenarios", "small", "--http", "1.1", "--concurrency", "4", "--rate", "200", "--duration", "0.5",
            "--warmup", "0", "--repeat", "1",
        ]).plan()
        let report = try await BenchRunner(plan: plan, executable: try Self.executable(), commandLine: "test", showsProgress: false).run()
        #expect(report.rate == 200)
        #expect(report.loop.hasPrefix("open loop"))
        #expect(!report.rows.contains { $0.isLimit })
        #expect(report.rows.count == 3)
        for row in report.rows {
            #expect(row.errors == 0, "\(row.transport): \(row.firstError ?? "")")
            // The schedule holds 100 sends and never more go out. Nothing is sent after the end, so a
            // worker starved by a busy machine sends fewer: the exact count is checked on virtual
            // time in OpenLoopTests.
            #expect((1...100).contains(row.requests), "\(row.transport): \(row.requests) requests")
            #expect(row.latencyHistogram?.count == UInt64(row.requests))
        }
    }

    @Test("a client that cannot run in a cell gets a row that says why, and nothing runs for it")
    func unsupportedRow() async throws {
        let plan = try RunCommand.parse([
            "--transports", "urlsession", "--scenarios", "small", "--http", "2", "--concurrency", "1", "--requests", "5", "--warmup", "0",
            "--repeat", "1", "--no-limit",
        ]).plan()
        let report = try await BenchRunner(plan: plan, executable: try Self.executable(), commandLine: "test", showsProgress: false).run()
        #expect(report.rows.count == 1)
        #expect(report.rows.first?.unsupported?.contains("private CA") == true)
        #expect(report.rows.first?.repeats == 0)
    }

    @Test("--url with -X, -H and --data-file: every client, the C reference and the limit tools send that request")
    func customRequestReachesTheServer() async throws {
        let server = try await TestServer.start(mode: .http1)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-body-\(UUID().uuidString)").path
        try Data(("order:" + String(repeating: "x", count: 4090)).utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        // The server answers 422 to any request that differs, which the run counts as an error.
        let url =
            server.baseURL + "/expect?method=PUT&header=X-Team:courier&header=Content-Type:application/x-order"
            + "&bodyLength=4096&bodyPrefix=order:"
        let common = [
            "--url", url, "-X", "PUT", "-H", "X-Team: courier", "-H", "Content-Type: application/x-order", "--data-file", file,
            "--timeout", "20", "--http", "1.1", "--concurrency", "2", "--warmup", "0", "--repeat", "1",
        ]
        let clients = Self.linked.filter { $0 != .mock && $0 != .curlEngine }.map(\.rawValue).joined(separator: ",")
        let counted = try RunCommand.parse(common + ["--transports", clients, "--requests", "40", "--no-limit"]).plan()
        let report = try await BenchRunner(plan: counted, executable: try Self.executable(), commandLine: "test", showsProgress: false)
            .run()
        // Bounded by time, so that wrk (HTTP/1.1) runs too when it is installed.
        let timed = try RunCommand.parse(common + ["--transports", "reference", "--duration", "1"]).plan()
        let limited = try await BenchRunner(plan: timed, executable: try Self.executable(), commandLine: "test", showsProgress: false)
            .run()
        let log = server.requestLog
        await server.shutdown()

        #expect(report.rows.count == Self.linked.count - 2)
        for row in report.rows + limited.rows {
            #expect(row.scenario == "custom")
            #expect(row.errors == 0, "\(row.transport): \(row.firstError ?? "")")
            #expect(row.requests > 0, "\(row.transport)")
        }
        for row in report.rows { #expect(row.requests == 40, "\(row.transport): \(row.requests)") }
        #expect(limited.rows.contains { $0.transport == "wrk" } == (LimitTools.wrk != nil))
        #expect(log.allSatisfy { $0.hasPrefix("/expect?") })
    }

    @Test("probe --cache: the second probe is answered by the disk cache, or revalidated, and says so")
    func probeCache() async throws {
        let server = try await TestServer.start(mode: .http1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-probe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func probe(_ path: String) async throws -> Probe.Outcome? {
            await (try ProbeCommand.parse([server.baseURL + path, "--transport", "curl", "--cache", directory]).probe()).run().first
        }
        let fresh = "/cacheable/probe-fresh?cc=max-age%3D600"
        let first = try await probe(fresh)
        let second = try await probe(fresh)
        let revalidating = "/cacheable/probe-stale?cc=no-cache"
        _ = try await probe(revalidating)
        let third = try await probe(revalidating)
        await server.shutdown()

        #expect(first?.cache == "miss")
        #expect(second?.cache == "hit")
        #expect(second?.cacheAgeSeconds != nil)
        #expect(second?.status == 200)
        #expect(third?.cache == "revalidated")
        #expect(Probe.text([second].compactMap { $0 }).contains("cache   hit, age "))
        let json = try JSONEncoder().encode(try #require(third))
        #expect(String(decoding: json, as: UTF8.self).contains(#""cache":"revalidated""#))
        #expect(throws: (any Error).self) { try ProbeCommand.parse(["http://127.0.0.1:9/", "--cache", "/proc/self/none/x"]) }
    }

    @Test("two processes share a disk cache: the second courier-bench probe is answered by what the first stored")
    func twoProcesses() async throws {
        let server = try await TestServer.start(mode: .http1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-probe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = [
            "probe", server.baseURL + "/cacheable/shared?cc=max-age%3D600", "--transport", "curl", "--cache", directory, "--json",
        ]
        let first = try await ChildProcess.run(try Self.executable(), arguments, timeout: .seconds(60))
        let second = try await ChildProcess.run(try Self.executable(), arguments, timeout: .seconds(60))
        let seen = server.requestLog
        await server.shutdown()
        #expect(first.status == 0 && second.status == 0, "\(first.errors) \(second.errors)")
        #expect(first.output.contains(#""cache":"miss""#), "\(first.output)")
        #expect(second.output.contains(#""cache":"hit""#), "\(second.output)")
        #expect(seen.count == 1, "the second process sent nothing")
    }

    @Test("probe: one request through each transport reports its status and size")
    func probe() async throws {
        let plan = try Self.tinyPlan()
        let servers = try await EmbeddedServers.start(for: plan, caDirectory: NSTemporaryDirectory())
        let url = servers.url(for: BenchConfiguration(scenario: .small, concurrency: 1, http: .http1), plan: plan)
        let probe = try ProbeCommand.parse([url, "-H", "X-Probe: 1", "--timeout", "10"]).probe()
        let outcomes = await probe.run()
        let missing = try ProbeCommand.parse([url.replacingOccurrences(of: "/bytes/100", with: "/status/404"), "--transport", "curl"])
            .probe()
        let notFound = await missing.run()
        await servers.shutdown()

        #expect(outcomes.map(\.transport) == ["curl", "urlsession", "ahc"])
        for outcome in outcomes where !TransportFactory.isLinked(.ahc) && outcome.transport == "ahc" {
            #expect(outcome.errorKind == "unsupported")
        }
        for outcome in outcomes where TransportFactory.isLinked(BenchTransport(rawValue: outcome.transport) ?? .ahc) {
            #expect(outcome.errorKind == nil, "\(outcome.transport): \(outcome.errorMessage ?? "")")
            #expect(outcome.status == 200)
            #expect(outcome.bytes == 100)
            #expect(outcome.phasesMs != nil || outcome.phasesUnavailable != nil)
        }
        #expect(outcomes.first?.phasesMs?["first_byte"] != nil)
        #expect(Probe.text(outcomes).contains("status  200"))
        #expect(notFound.first?.status == 404)
        #expect(notFound.first?.errorKind == nil)
    }
}
