import CourierTestServer
import Foundation
import Testing

/// Mutated responses through URLSession, which the in-process mutation case leaves out because
/// FoundationNetworking traps on some broken answers. Here the calls run in a child process
/// (`CourierURLSessionProbe --mutations`), restarted after each crash: every seed that does not
/// crash the toolchain must end exactly once, with a response or a typed `NetworkError`, and the
/// seeds that crash are counted (all of them so far: "Transfer completed, but there's no
/// response", when the connection closes before a whole head). 400 seeds by default, as the
/// in-process case; `COURIER_URLSESSION_MUTATIONS=<count>` sets another (`scripts/mutate.sh`:
/// 10,000). The results are in docs/ROBUSTNESS.md.
@Suite("URLSession: mutated responses in a child process", .timeLimit(.minutes(30)))
struct URLSessionMutationSweepTests {
    @Test("every seed ends once, typed, or crashes FoundationNetworking (counted)")
    func sweep() async throws {
        let count = UInt64(ProcessInfo.processInfo.environment["COURIER_URLSESSION_MUTATIONS"] ?? "") ?? 400
        let probe = try #require(ChildProcess.sibling(named: "CourierURLSessionProbe"))
        let server = try await FaultServer.start()
        var outcomes: [String: Int] = [:]
        var crashes: [UInt64] = []
        /// The toolchain's message for each crash, counted.
        var crashMessages: [String: Int] = [:]
        var endedTwice: [UInt64] = []
        /// Up to twelve distinct messages of each kind, as `seed: message`.
        var examples: [String: [String: UInt64]] = [:]
        var next: UInt64 = 0
        while next < count {
            let run = try await ChildProcess.run(
                probe, ["--mutations", server.baseURL, String(next), String(count - next)], timeout: .seconds(600))
            try #require(!run.timedOut, "the probe hung from seed \(next)")
            var started: UInt64?
            var ended = Set<UInt64>()
            for line in run.output.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 3)
                guard parts.count >= 2, let seed = UInt64(parts[1]) else { continue }
                if parts[0] == "start" {
                    started = seed
                } else if parts[0] == "end", parts.count >= 3 {
                    if !ended.insert(seed).inserted { endedTwice.append(seed) }
                    // FoundationNetworking sometimes reports NSURLErrorUnknown with no text at all
                    // (libcurl 8, about 1 in 10,000): nothing to classify it by, so it stays a
                    // transport failure, counted apart from the ones that say what happened.
                    let silent = parts[2] == "transport_failure" && (parts.count < 4 || parts[3].drop { $0 == " " }.hasPrefix("["))
                    outcomes[silent ? "transport_failure (no message)" : String(parts[2]), default: 0] += 1
                    let message = parts.count == 4 ? String(parts[3]).prefix(70) : ""
                    if examples[String(parts[2]), default: [:]].count < 12 {
                        examples[String(parts[2]), default: [:]][String(message)] = seed
                    }
                    started = nil
                }
            }
            if run.status == 0 {
                break
            }
            // The process died during the call of the seed it started last.
            let crashed = try #require(started, "the probe failed outside a call: \(run.errors.prefix(500))")
            crashes.append(crashed)
            let message = run.errors.split(separator: "\n").first { $0.contains("Fatal error") || $0.contains("fatal error") }
            crashMessages[message.map { String($0.suffix(120)) } ?? "signal \(run.status)", default: 0] += 1
            next = crashed + 1
        }
        await server.shutdown()
        print(
            "URLSession mutations: \(count) seeds, \(crashes.count) crashed FoundationNetworking; outcomes: \(outcomes.sorted { $0.key < $1.key })"
        )
        print("crashing seeds: \(crashes.prefix(40))")
        for (message, count) in crashMessages.sorted(by: { $0.value > $1.value }) { print("  crash ×\(count): \(message)") }
        for (kind, messages) in examples.sorted(by: { $0.key < $1.key }) {
            for (message, seed) in messages.sorted(by: { $0.value < $1.value }) {
                print("  e.g. \(kind) \(seed) (\(ResponseMutation.response(seed: seed).mutations.joined(separator: ", "))): \(message)")
            }
        }
        #expect(endedTwice.isEmpty)
        #expect(outcomes["foreign"] == nil)
        #expect(outcomes["timed_out"] == nil)
        // As in the in-process case: a broken answer is never the request's fault, and never the
        // catch-all.
        #expect(outcomes["invalid_request"] == nil)
        #expect(outcomes["transport_failure"] == nil)
        #expect(outcomes["transport_failure (no message)", default: 0] * 1000 <= Int(count), "more silent failures than 1 in 1,000")
        #expect(outcomes.values.reduce(0, +) + crashes.count == Int(count))
    }
}
