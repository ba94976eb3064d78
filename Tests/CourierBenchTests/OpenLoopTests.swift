import ArgumentParser
import Synchronization
import Testing

@testable import CourierBenchKit

/// Virtual time for the load loop: `now` moves only when a caller sleeps, to the time it sleeps
/// until, so a schedule runs the same however busy the machine is.
final class VirtualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))
    /// Every time a caller slept until.
    let sleeps = Mutex<[Duration]>([])

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        current.withLock { if deadline > $0 { $0 = deadline } }
        sleeps.withLock { $0.append(deadline.offset) }
        await Task.yield()
    }

    /// Moves time on without a sleep (a call that takes this long).
    func pass(_ duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }
}

@Suite("courier-bench: the open loop sends at its rate")
struct OpenLoopTests {
    @Test("an open-loop run sends rate × duration requests, each caller on its share of the schedule")
    func keepsItsRate() async {
        let clock = VirtualClock()
        let calls = Atomic<Int>(0)
        // 400 requests/s for 0.5 s from 4 callers: the schedule holds exactly 200 sends, 2.5 ms apart.
        let tally = await LoadLoop.run(concurrency: 4, rate: 400, for: .milliseconds(500), maxRequests: nil, clock: clock) {
            calls.add(1, ordering: .relaxed)
            return .success(bytes: 1, httpVersion: nil)
        }
        #expect(tally.completed == 200)
        #expect(calls.load(ordering: .relaxed) == 200)
        #expect(tally.histogram.count == 200)
        // Callers wait only for times on the schedule (multiples of 2.5 ms), the last at 497.5 ms.
        // (One caller's sleep moves virtual time for all, so which sends wait varies.)
        let sleeps = clock.sleeps.withLock { $0 }
        #expect(!sleeps.isEmpty)
        #expect(sleeps.max() == .microseconds(497_500))
        #expect(sleeps.allSatisfy { $0.components.attoseconds % 2_500_000_000_000_000 == 0 })
    }

    @Test("a late response delays the sends behind it, and their latency counts from their scheduled time")
    func coordinatedOmissionCorrected() async {
        let clock = VirtualClock()
        let calls = Atomic<Int>(0)
        // One caller at 100 requests/s: sends due at 0, 10, 20 … ms. The first call takes 50 ms;
        // the four sends due meanwhile go out late, back to back.
        let tally = await LoadLoop.run(concurrency: 1, rate: 100, for: .milliseconds(100), maxRequests: nil, clock: clock) {
            if calls.add(1, ordering: .relaxed).newValue == 1 { clock.pass(.milliseconds(50)) }
            return .success(bytes: 1, httpVersion: nil)
        }
        #expect(tally.completed == 10)
        let summary = tally.histogram.summary
        // Latencies from the schedule: 50 ms, then 40, 30, 20, 10 ms of waiting, then 0 (1 µs, the floor).
        #expect(summary.max >= 49_900 && summary.max <= 50_100)
        #expect(tally.histogram.buckets.filter { $0.value > 1 }.count == 5)
    }

    @Test("the closed loop sends back to back, bounded by the request count")
    func closedLoopBound() async {
        let tally = await LoadLoop.run(concurrency: 3, for: .seconds(30), maxRequests: 50) {
            .success(bytes: 1, httpVersion: nil)
        }
        #expect(tally.completed == 50)
    }

    @Test("--rate is checked, turns the limit tools off, and --strict is read")
    func rateOptions() throws {
        let plan = try RunCommand.parse(["--rate", "2500", "--strict"]).plan()
        #expect(plan.rate == 2500)
        #expect(plan.strict)
        #expect(!plan.runsLimitTools)
        #expect(try RunCommand.parse([]).plan().rate == nil)
        for bad in ["0", "-5", "1000001", "nan"] {
            #expect(throws: (any Error).self, "--rate \(bad)") { try RunCommand.parse(["--rate", bad]).plan() }
        }
        #expect {
            try RunCommand.parse(["--rate", "0.5"])
        } throws: { error in
            "\(error)".contains("--rate must be 1 to 1000000 requests per second (got 0.5)")
        }
    }
}
