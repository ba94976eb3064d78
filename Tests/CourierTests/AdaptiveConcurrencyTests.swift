import CourierMock
import Foundation
import Testing

@testable import Courier

/// The adaptive per-host limit (`RequestQueue.Limits.adaptive`): the AIMD rule and load shedding
/// as a state machine without I/O, and the queue's gate feeding it on a manual clock.
@Suite("Adaptive concurrency")
struct AdaptiveConcurrencyTests {
    static let millisecond: Int64 = 1_000_000

    func slots(initial: Int = 2, maximum: Int = 8) -> QueueSlots {
        var limits = RequestQueue.Limits(maxConcurrent: 100, maxConcurrentPerHost: maximum)
        var adaptive = AdaptiveConcurrency()
        adaptive.initialLimit = initial
        limits.adaptive = adaptive
        return QueueSlots(limits: limits)
    }

    /// One call of `host` that held its slot for `milliseconds`.
    func run(_ slots: inout QueueSlots, host: String = "a", milliseconds: Int64, failed: Bool = false) {
        _ = slots.admit(id: 1, host: host, priority: .normal)
        _ = slots.release(host: host, heldNanoseconds: milliseconds * Self.millisecond, failed: failed)
    }

    @Test("quick calls raise the limit by about one per round, up to the per-host maximum")
    func additiveIncrease() {
        var slots = slots(initial: 2, maximum: 8)
        #expect(slots.limit(of: "a") == 2)
        for _ in 0..<4 { run(&slots, milliseconds: 10) }
        #expect(slots.limit(of: "a") == 3)
        for _ in 0..<200 { run(&slots, milliseconds: 10) }
        #expect(slots.limit(of: "a") == 8)
        #expect(slots.limit(of: "b") == 2, "each host has its own limit")
    }

    @Test("a call slower than the tolerance over the baseline, or a failed one, cuts the limit; never below the minimum")
    func multiplicativeDecrease() {
        var slots = slots(initial: 8, maximum: 8)
        run(&slots, milliseconds: 10)  // the baseline
        run(&slots, milliseconds: 15)  // within 2× of it: no cut
        #expect(slots.limit(of: "a") == 8)
        run(&slots, milliseconds: 50)  // 5× the baseline: × 0.9
        #expect(slots.limit(of: "a") == 7)
        run(&slots, milliseconds: 10, failed: true)
        #expect(slots.limit(of: "a") == 6)
        for _ in 0..<100 { run(&slots, milliseconds: 10, failed: true) }
        #expect(slots.limit(of: "a") == 1)
    }

    @Test("the limit falls under rising latency and recovers when the host is quick again")
    func fallsAndRecovers() {
        var slots = slots(initial: 6, maximum: 6)
        for _ in 0..<20 { run(&slots, milliseconds: 10) }
        #expect(slots.limit(of: "a") == 6)
        for _ in 0..<10 { run(&slots, milliseconds: 100) }
        let congested = slots.limit(of: "a")
        #expect(congested <= 3)
        for _ in 0..<60 { run(&slots, milliseconds: 10) }
        #expect(slots.limit(of: "a") == 6)
    }

    @Test("a call that could not start before its deadline is shed at once; with time left it waits")
    func loadShedding() {
        var slots = slots(initial: 1, maximum: 1)
        for _ in 0..<5 { run(&slots, milliseconds: 100) }
        #expect(slots.admit(id: 10, host: "a", priority: .normal) == .start)
        // One running: the next waits one round of about 100 ms.
        #expect(slots.admit(id: 11, host: "a", priority: .normal, remainingNanoseconds: 1_000 * Self.millisecond) == .wait)
        // Behind it, two rounds: 200 ms is more than the 150 ms left.
        let shed = slots.admit(id: 12, host: "a", priority: .normal, remainingNanoseconds: 150 * Self.millisecond)
        #expect(shed == .rejectLate(waitAhead: 1, perCallNanoseconds: 100 * Self.millisecond))
    }

    @Test("out-of-range values are refused naming their key")
    func validation() {
        func key(_ change: (inout AdaptiveConcurrency) -> Void) -> String? {
            var limits = RequestQueue.Limits(maxConcurrent: 16, maxConcurrentPerHost: 6)
            var adaptive = AdaptiveConcurrency()
            change(&adaptive)
            limits.adaptive = adaptive
            do {
                try limits.validate()
                return nil
            } catch {
                return error.key
            }
        }
        #expect(key { $0.initialLimit = 7 } == "queue.adaptive.initialLimit")
        #expect(key { $0.minimumLimit = 0 } == "queue.adaptive.minimumLimit")
        #expect(key { $0.latencyTolerance = 1 } == "queue.adaptive.latencyTolerance")
        #expect(key { $0.backoffRatio = 0.999 } == "queue.adaptive.backoffRatio")
        #expect(key { _ in } == nil)
    }

    struct Call: Endpoint {
        typealias Output = Data
        var path: String { "x" }
    }

    @Test("through the client: the queue's gate feeds each call's time to its host's limit")
    func throughTheClient() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("ok", delay: .milliseconds(10)))
        let clock = ManualTimeSource()
        var limits = RequestQueue.Limits(maxConcurrent: 16, maxConcurrentPerHost: 6)
        var adaptive = AdaptiveConcurrency()
        adaptive.initialLimit = 2
        limits.adaptive = adaptive
        let queue = try RequestQueue(limits: limits, timeSource: clock)
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock, queue: queue)
        for _ in 0..<12 {
            let call = Task { try await client.send(Call()) }
            await clock.waitForAlarms(2)  // the deadline and the mock's 10 ms
            clock.advance(by: .milliseconds(10))
            _ = try await call.value
        }
        let limit = queue.status.adaptiveLimitByHost["api.test"]
        #expect((limit ?? 0) > 2, "quick calls raised the limit: \(String(describing: limit))")
        await client.shutdown()
    }

    @Test("adaptive limits are read from a configuration file's queue; values out of range name their key")
    func configurationFile() throws {
        let loaded = try loadConfiguration(
            #"{"queue": {"maxConcurrentPerHost": 8, "adaptive": {"initialLimit": 3, "minimumLimit": 2, "latencyTolerance": 3, "backoffRatio": 0.8}}}"#
        )
        let adaptive = try #require(loaded.queue?.adaptive)
        #expect(adaptive.initialLimit == 3 && adaptive.minimumLimit == 2 && adaptive.latencyTolerance == 3 && adaptive.backoffRatio == 0.8)
        for (json, key) in [
            (#"{"queue": {"adaptive": {"initialLimit": 100}}}"#, "queue.adaptive.initialLimit"),
            (#"{"queue": {"adaptive": {"backoffRatio": 2}}}"#, "queue.adaptive.backoffRatio"),
            (#"{"queue": {"adaptive": {"gradient": 1}}}"#, "queue.adaptive.gradient"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try loadConfiguration(json) }
            #expect(error?.key == key, "\(json)")
        }
    }
}
