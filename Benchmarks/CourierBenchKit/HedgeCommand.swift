import ArgumentParser
import Courier
import CourierCurl
import CourierResilience
import CourierTestServer
import Foundation

/// `courier-bench hedge`: a server with a slow tail, with and without hedging, side by side.
public struct HedgeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hedge",
        abstract: "Measures hedging against a slow tail: p50, p99 and the extra requests, with and without it.",
        discussion: """
            The embedded server answers GET /tail/{every} at once, except every --every-th request (2% by default), \
            which waits --slow-ms (50 ms). Two clients on the curl transport take turns for --rounds rounds of \
            --calls calls each at --concurrency: one without hedging, one with Resilience.hedging (by default at its \
            defaults: p95 of the last 100 calls, at most 5% extra; --percentile and --max-extra change them). Each reports p50, p99 and p99.9 over all rounds, and the \
            requests the server received beyond the calls made.
            """)

    @Option(help: "Every how many requests one is slow (50: 2%).")
    var every: Int = 50
    @Option(help: "How long a slow answer waits, in milliseconds.")
    var slowMs: Int = 50
    @Option(help: "Calls per client per round.")
    var calls: Int = 4000
    @Option(help: "Callers in flight at once (closed loop).")
    var concurrency: Int = 8
    @Option(help: "Rounds; the clients take turns in each.")
    var rounds: Int = 3
    @Option(help: "The hedging percentile (HedgingPolicy.percentile).")
    var percentile: Double = HedgingPolicy().percentile
    @Option(help: "The most copies as a share of calls (HedgingPolicy.maxExtraShare).")
    var maxExtra: Double = HedgingPolicy().maxExtraShare

    public init() {}

    struct Tail: Endpoint {
        typealias Output = String
        let every: Int
        let slowMs: Int
        var path: String { "tail/\(every)" }
        var query: [QueryItem] { [QueryItem("ms", String(slowMs))] }
    }

    public func run() async throws {
        guard (2...10_000).contains(every) else { throw ValidationError("--every must be 2 to 10000") }
        guard (1...10_000).contains(slowMs) else { throw ValidationError("--slow-ms must be 1 to 10000") }
        guard (100...1_000_000).contains(calls) else { throw ValidationError("--calls must be 100 to 1000000") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 256") }
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be 1 to 20") }
        let server = try await TestServer.start()
        var plain = ClientConfiguration(baseURL: server.baseURL, transport: "curl")
        plain.exportsMetrics = false
        var hedged = plain
        var policy = HedgingPolicy()
        policy.percentile = percentile
        policy.maxExtraShare = maxExtra
        try policy.validate(source: "--percentile/--max-extra")
        hedged.resilience.hedging = policy
        let registry = TransportRegistry([.curl()])
        let clients = [
            ("without hedging", try NetworkClient(configuration: plain, registry: registry)),
            ("with hedging", try NetworkClient(configuration: hedged, registry: registry)),
        ]
        let endpoint = Tail(every: every, slowMs: slowMs)
        var histograms: [String: LatencyHistogram] = [:]
        var extra: [String: Int] = [:]
        var made: [String: Int] = [:]
        for (_, client) in clients {  // Warm-up: connections, and the hedged client's latency window.
            _ = await LoadLoop.run(concurrency: concurrency, for: .seconds(30), maxRequests: 400) {
                await Self.outcome { try await client.send(endpoint) }
            }
        }
        for round in 1...rounds {
            for (name, client) in clients {
                let before = server.requestCount
                let tally = await LoadLoop.run(concurrency: concurrency, for: .seconds(600), maxRequests: calls) {
                    await Self.outcome { try await client.send(endpoint) }
                }
                if tally.failed > 0 {
                    throw ValidationError("\(name): \(tally.failed) calls failed, the first: \(tally.firstError ?? "?")")
                }
                histograms[name, default: LatencyHistogram()].add(tally.histogram)
                extra[name, default: 0] += server.requestCount - before - tally.completed
                made[name, default: 0] += tally.completed
            }
            FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
        }
        for (_, client) in clients { await client.shutdown() }
        await server.shutdown()
        let share = 100.0 / Double(every)
        print(
            "GET /tail/\(every): \(String(format: "%.1f", share))% of answers \(slowMs) ms late; \(rounds) rounds × \(calls) calls, concurrency \(concurrency), curl, HTTP/1.1"
        )
        print("client            calls    p50 ms   p99 ms   p99.9 ms  extra requests")
        for (name, _) in clients {
            let summary = (histograms[name] ?? LatencyHistogram()).summary
            let calls = made[name] ?? 0
            let sent = extra[name] ?? 0
            print(
                name.padding(toLength: 18, withPad: " ", startingAt: 0)
                    + String(
                        format: "%-9d%-9.3f%-9.3f%-10.3f%d (%.2f%%)", calls, summary.p50 / 1000, summary.p99 / 1000, summary.p999 / 1000,
                        sent, calls > 0 ? 100.0 * Double(sent) / Double(calls) : 0))
        }
    }

    static func outcome(_ call: () async throws -> String) async -> CallOutcome {
        do {
            let text = try await call()
            return text == "tail" ? .success(bytes: 4, httpVersion: nil) : .failure("unexpected body \(text)")
        } catch {
            return .failure("\(error)")
        }
    }
}
