import Foundation

/// Issue 40's targets for the transports (issue 24's, raised), checked against the rows of one run.
///
/// - CPU per call above the C reference: at most 3 µs for `curl-engine` and 5 µs for `curl`
///   (small GET, HTTP/1.1, concurrency 64).
/// - Throughput: `curl-engine` ≥ 0.80× and `curl` ≥ 0.75× the reference over HTTP/1.1 at
///   concurrency 16 and 64 (small and medium GET); both ≥ 0.85× over HTTP/2, with TLS and as h2c
///   (h2c on libcurl 8); both ≥ 0.80× for 1 MiB downloads at concurrency 64.
/// - Peers: `curl` ≥ 3× AsyncHTTPClient over HTTP/1.1 and ≥ 2.5× over HTTP/2; ≥ 15× URLSession.
/// - The client stack: the mock ≥ 800,000 calls/s.
/// - Memory: 64 concurrent 1 MiB downloads read as streams (`large`, concurrency 64, `--stream`)
///   with a peak RSS at most the reference's plus 16 MiB. A buffered run holds every body whole,
///   64 MiB and more, so the target is not checked there.
///
/// In the open loop (`--rate`) every client sends the same number of requests, so only the CPU
/// and memory targets are checked.
public struct TargetCheck: Codable, Sendable, Equatable {
    /// What is checked, for example `curl ≥ 0.75× the C reference`.
    public var target: String
    /// The cell, for example `small · HTTP/1.1 · c64`.
    public var cell: String
    /// The measured figure, in ``unit``.
    public var measured: Double
    /// The bar it has to reach, in ``unit``.
    public var required: Double
    /// What the two numbers count.
    public var unit: Unit
    /// Whether `measured` must stay at or below `required` (CPU, memory) instead of reaching it.
    public var atMost: Bool
    /// Whether it reached it.
    public var met: Bool

    /// What a target's numbers count.
    public enum Unit: String, Codable, Sendable {
        /// A ratio of two clients' requests per second.
        case ratio
        /// Requests per second.
        case rate
        /// Microseconds of CPU per call.
        case microseconds
        /// MiB of memory.
        case mebibytes
    }

    /// The CPU per call a client may spend above the C reference's, in microseconds.
    static let cpuBudget: [BenchTransport: Double] = [.curlEngine: 3, .curl: 5]
    /// The share of the reference's requests per second each client must reach over HTTP/1.1.
    static let http1Share: [BenchTransport: Double] = [.curlEngine: 0.80, .curl: 0.75]
    /// The share both must reach over HTTP/2 (TLS, and h2c on libcurl 8).
    static let http2Share = 0.85
    /// The share both must reach for 1 MiB downloads at concurrency 64.
    static let largeShare = 0.80
    /// The mock's calls per second.
    static let mockRate = 800_000.0
    /// The peak RSS a curl client may use above the reference's, for 64 concurrent 1 MiB downloads.
    static let memoryAllowanceMiB = 16.0

    /// Checks every target the rows allow: cells where both sides ran without errors.
    /// - Parameters:
    ///   - rows: One run's rows.
    ///   - pinned: Whether each client ran on one CPU.
    ///   - libcurlMajor: The linked libcurl's major version (the h2c targets need 8).
    ///   - openLoop: Whether the run sent at a fixed rate (`--rate`).
    ///   - streamed: Whether the Courier clients read each body as a stream (`--stream`).
    static func check(
        _ rows: [ResultRow], pinned: Bool, libcurlMajor: Int, openLoop: Bool = false, streamed: Bool = false
    ) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        let byCell = Dictionary(grouping: rows.filter { $0.repeats > 0 && $0.rps > 0 }, by: \.cellKey)
        for key in byCell.keys.sorted() {
            guard let cellRows = byCell[key], let first = cellRows.first else { continue }
            let cell = "\(first.scenario) · HTTP/\(first.http) · c\(first.concurrency)"
            func clean(_ transport: BenchTransport) -> ResultRow? {
                cellRows.first { $0.transport == transport.rawValue && !$0.hasErrors }
            }
            func add(_ target: String, _ measured: Double, _ required: Double, _ unit: Unit, atMost: Bool = false) {
                let met = atMost ? measured <= required : measured >= required
                checks.append(
                    TargetCheck(target: target, cell: cell, measured: measured, required: required, unit: unit, atMost: atMost, met: met))
            }
            let http1 = first.http == HTTPChoice.http1.rawValue
            let reference = clean(.reference)
            for client in [BenchTransport.curlEngine, .curl] {
                guard let row = clean(client), let reference else { continue }
                if http1, first.scenario == Scenario.small.rawValue, first.concurrency == 64,
                    let cpu = row.cpuMicrosecondsPerCall, let floor = reference.cpuMicrosecondsPerCall, let budget = cpuBudget[client]
                {
                    add(
                        "\(client.rawValue) CPU per call above the C reference ≤ \(Int(budget)) µs", cpu - floor, budget, .microseconds,
                        atMost: true)
                }
                let large = first.scenario == Scenario.large.rawValue && first.concurrency == 64
                if large, streamed, let peak = row.peakRSSMiB, let floor = reference.peakRSSMiB {
                    add(
                        "\(client.rawValue) peak RSS ≤ the C reference's + \(Int(memoryAllowanceMiB)) MiB, streamed", peak - floor,
                        memoryAllowanceMiB,
                        .mebibytes, atMost: true)
                }
                guard !openLoop else { continue }
                let ratio = row.rps / reference.rps
                if http1, [16, 64].contains(first.concurrency),
                    [Scenario.small.rawValue, Scenario.medium.rawValue].contains(first.scenario), let share = http1Share[client]
                {
                    add("\(client.rawValue) ≥ \(String(format: "%.2f", share))× the C reference", ratio, share, .ratio)
                }
                let share = String(format: "%.2f", http2Share)
                if first.http == HTTPChoice.http2.rawValue, [Scenario.small.rawValue, Scenario.medium.rawValue].contains(first.scenario) {
                    add("\(client.rawValue) ≥ \(share)× the C reference over HTTP/2", ratio, http2Share, .ratio)
                }
                if first.http == HTTPChoice.h2c.rawValue, libcurlMajor >= 8 {
                    add("\(client.rawValue) ≥ \(share)× the C reference over h2c", ratio, http2Share, .ratio)
                }
                if large, http1 {
                    add(
                        "\(client.rawValue) ≥ \(String(format: "%.2f", largeShare))× the C reference, 1 MiB downloads", ratio, largeShare,
                        .ratio)
                }
            }
            guard !openLoop else { continue }
            if let curl = clean(.curl)?.rps {
                if let ahc = clean(.ahc)?.rps, first.http != HTTPChoice.h2c.rawValue {
                    let needed = http1 ? 3.0 : 2.5
                    add("curl ≥ \(String(format: "%g", needed))× AsyncHTTPClient", curl / ahc, needed, .ratio)
                }
                if let urlSession = clean(.urlsession)?.rps {
                    add("curl ≥ 15× URLSession", curl / urlSession, 15, .ratio)
                }
            }
            if let mock = clean(.mock)?.rps {
                add(
                    pinned ? "mock ≥ 800,000 calls/s on one core" : "mock ≥ 800,000 calls/s (not pinned: may use every core)", mock,
                    mockRate, .rate)
            }
        }
        return checks
    }

    /// The measured figure as text: `0.56×`, `213000/s`, `11.2 µs`, `3.5 MiB`.
    public var measuredText: String { Self.text(measured, unit) }
    /// The bar as text, with its comparison: `≥ 0.75×`, `≤ 8.0 µs`.
    public var requiredText: String { (atMost ? "≤ " : "≥ ") + Self.text(required, unit) }

    private static func text(_ value: Double, _ unit: Unit) -> String {
        switch unit {
        case .ratio: String(format: "%.2f×", value)
        case .rate: "\(Int(value.rounded()))/s"
        case .microseconds: String(format: "%.1f µs", value)
        case .mebibytes: String(format: "%.1f MiB", value)
        }
    }
}
