import Courier
import CourierTestSupport
import Foundation
import Testing

/// Runs in a child process of its own (`IsolatedSuiteTests` in CourierTransportTests): its 10,000
/// calls would hold the cooperative pool every other suite waits on.
@Suite(
    "Queue soak",
    .enabled(
        if: ProcessInfo.processInfo.environment["COURIER_ISOLATED_SUITE"] == "QueueSoakTests",
        "runs in a child process of its own (IsolatedSuiteTests); alone: COURIER_DEVELOPMENT=1 COURIER_ISOLATED_SUITE=QueueSoakTests swift test --filter QueueSoakTests"
    ))
struct QueueSoakTests {
    @Test("10,000 calls, limit 16, 20% failures, random cancellations: each completes exactly once, nothing is left")
    func soak() async throws {
        let count = 10_000
        let transport = CountingTransport(delay: .microseconds(200)) { path in
            (Int(path.split(separator: "/").last ?? "") ?? 0) % 5 == 0
        }
        // Room for every call and its retries: the waiting limit is not what this soak is about
        // (on a busy machine the calls start faster than they run, and the failed ones retry).
        let queue = try RequestQueue(limits: .init(maxConcurrent: 16, maxConcurrentPerHost: 16, maxWaiting: 2 * count))
        let client = try makeQueueClient(transport, queue: queue)
        let completions = Locked([Int](repeating: 0, count: count))
        let outcomes = Locked([String: Int]())
        var generator = SeededGenerator(seed: 2026)
        let calls = (0..<count).map { index in
            // One call in ten asks for a path others ask for too, so some transfers are shared.
            QueuedAPI(client: client, path: index % 10 == 1 ? "dup/\(index % 50)" : "n/\(index)")
        }
        for (index, call) in calls.enumerated() {
            // Started in waves: 10,000 new tasks at once would queue ahead of every other test's
            // work on the shared cooperative pool and make their timing checks fail.
            if index % 100 == 0 { try await Task.sleep(for: .milliseconds(2)) }
            try call.start { result in
                completions.withLock { $0[index] += 1 }
                let name =
                    switch result {
                    case .success: "succeeded"
                    case .failure(let error): error.kind.description
                    }
                outcomes.withLock { $0[name, default: 0] += 1 }
            }
        }
        for _ in 0..<1000 {
            calls.randomElement(using: &generator)?.cancel()
            if Int.random(in: 0..<10, using: &generator) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        let finished = await waitUntil(.seconds(120)) { completions.withLock { $0.reduce(0, +) } == count }
        #expect(finished)
        try await Task.sleep(for: .milliseconds(50))
        let counts = completions.withLock { $0 }
        #expect(counts.allSatisfy { $0 == 1 }, "\(counts.enumerated().filter { $0.element != 1 }.prefix(5))")
        let tally = outcomes.withLock { $0 }
        #expect(tally.values.reduce(0, +) == count)
        #expect(Set(tally.keys).isSubset(of: ["succeeded", "connection_closed", "cancelled"]), "\(tally)")
        #expect((tally["connection_closed"] ?? 0) > 0 && (tally["cancelled"] ?? 0) > 0 && (tally["succeeded"] ?? 0) > 0)
        let status = queue.status
        #expect(status.running == 0 && status.waiting == 0 && status.calls == 0 && status.sharedTransfers == 0, "\(status)")
        #expect(transport.snapshot.maxRunning <= 16)
        #expect(transport.snapshot.running == 0)
        #expect(calls.allSatisfy { [.succeeded, .failed, .cancelled].contains($0.state) })
    }
}
