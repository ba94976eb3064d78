import ArgumentParser
import Synchronization
import Testing

@testable import CourierBenchKit

@Suite("courier-bench: the open loop sends at its rate")
struct OpenLoopTests {
    @Test("a tiny open-loop run sends rate × duration requests, and never more")
    func keepsItsRate() async {
        let calls = Atomic<Int>(0)
        let clock = ContinuousClock()
        // 400 requests/s for 0.5 s from 4 callers: the schedule holds exactly 200 sends.
        let tally = await LoadLoop.run(concurrency: 4, rate: 400, until: clock.now + .milliseconds(500), maxRequests: nil) {
            calls.add(1, ordering: .relaxed)
            return .success(bytes: 1, httpVersion: nil)
        }
        #expect(tally.completed == calls.load(ordering: .relaxed))
        #expect(tally.completed <= 200)
        // A caller woken late past the end skips its last send; a busy machine may lose a few.
        #expect(tally.completed >= 180, "sent \(tally.completed) of 200")
        #expect(tally.histogram.count == UInt64(tally.completed))
    }

    @Test("the closed loop sends back to back, bounded by the request count")
    func closedLoopBound() async {
        let clock = ContinuousClock()
        let tally = await LoadLoop.run(concurrency: 3, until: clock.now + .seconds(30), maxRequests: 50) {
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
