import Courier
import CourierTestServer
import Foundation
import Testing

extension ConformanceCases {
    /// How the calls of ``mutatedResponses(_:seeds:concurrency:)`` ended.
    public struct MutationTally: Sendable {
        /// Calls that ended, one per seed.
        public var completed = 0
        /// Calls that got a response, by status code.
        public var responses: [Int: Int] = [:]
        /// Calls that failed with a ``NetworkError``, by kind.
        public var failures: [String: Int] = [:]
        /// Calls that failed with anything else (must stay empty), as `seed: error`.
        public var foreign: [String] = []
        /// Seeds whose call timed out (must stay empty: the server always closes the connection).
        public var timedOut: [UInt64] = []
        /// The first three failures of each kind, as `seed (mutations): error`.
        public var examples: [String: [String]] = [:]
    }

    /// Mutated responses end to end: one call per seed to ``FaultServer``'s `/mutate/<seed>`, a
    /// valid response broken in ways the seed picks (``ResponseMutation``), `concurrency` at a
    /// time. Each call must end exactly once, with a response or a ``NetworkError``, never as a
    /// timeout (the server closes every connection after its bytes; the deadline is on a clock that
    /// never moves, so a hang would show as the test's time limit). Redirects are off, so a broken
    /// `Location` can never send a request anywhere but the loopback server.
    /// - Returns: How the calls ended, for the test's checks and the robustness record.
    public static func mutatedResponses(
        _ transport: ConformanceTransport, seeds: Range<UInt64>, concurrency: Int = 8
    ) async throws -> MutationTally {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) {
            $0.requestTimeout = .seconds(60)
            $0.timeSource = ManualTimeSource()
            $0.maxRedirects = 0
        }
        let tally = Locked(MutationTally())
        await withTaskGroup(of: Void.self) { group in
            var next = seeds.lowerBound
            func add() {
                let seed = next
                next += 1
                group.addTask {
                    let outcome: Result<Int, any Error>
                    do {
                        outcome = .success(try await client.response(for: RawEndpoint(path: "mutate/\(seed)")).head.status.code)
                    } catch {
                        outcome = .failure(error)
                    }
                    tally.withLock { tally in
                        tally.completed += 1
                        switch outcome {
                        case .success(let status): tally.responses[status, default: 0] += 1
                        case .failure(let error as NetworkError):
                            tally.failures["\(error.kind)", default: 0] += 1
                            if tally.examples["\(error.kind)", default: []].count < 3 {
                                let mutations = ResponseMutation.response(seed: seed).mutations.joined(separator: ", ")
                                tally.examples["\(error.kind)", default: []].append("\(seed) (\(mutations)): \(error)")
                            }
                            if error.kind == .timedOut { tally.timedOut.append(seed) }
                        case .failure(let error): tally.foreign.append("\(seed): \(error)")
                        }
                    }
                }
            }
            for _ in 0..<min(concurrency, seeds.count) { add() }
            for await _ in group where next < seeds.upperBound { add() }
        }
        await client.shutdown()
        await server.shutdown()
        return tally.withLock { $0 }
    }
}
