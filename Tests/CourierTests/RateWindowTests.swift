import Testing

@testable import Courier

@Suite("Error-rate window")
struct RateWindowTests {
    @Test("counts calls and failures inside the window, whatever the call rate", arguments: [1, 1_000, 250_000])
    func counts(callsPerSecond: Int) {
        var window = RateWindow()
        var last = (calls: 0, failures: 0)
        // Ten seconds of calls in a 60 s window, every other one failed.
        for index in 0..<(callsPerSecond * 10) {
            let elapsed = Duration.nanoseconds(Int64(index) * 1_000_000_000 / Int64(callsPerSecond))
            last = window.add(failed: index % 2 == 0, elapsed: elapsed, window: .seconds(60))
        }
        #expect(last.calls == callsPerSecond * 10)
        #expect(last.failures == (callsPerSecond * 10 + 1) / 2)
    }

    @Test("calls leave the window once it has passed them, at most one slice late")
    func expiry() {
        var window = RateWindow()
        for _ in 0..<10 { _ = window.add(failed: true, elapsed: .zero, window: .seconds(60)) }
        // Still inside at 59 s; gone one slice (1 s) after the window has passed them.
        #expect(window.add(failed: false, elapsed: .seconds(59), window: .seconds(60)) == (11, 10))
        #expect(window.add(failed: false, elapsed: .seconds(61), window: .seconds(60)) == (2, 0))
        // Long gaps reuse the slices without counting stale ones.
        #expect(window.add(failed: true, elapsed: .seconds(3_600), window: .seconds(60)) == (1, 1))
    }
}
