/// The calls and failures of one group over a sliding window, counted in ``slices`` equal
/// slices of it: constant memory at any call rate, and constant work per call (running totals;
/// a slice is emptied once, when the window moves past it).
package struct RateWindow: Sendable {
    /// How many slices a window has.
    package static let slices = 60

    /// An empty window.
    package init() {}

    private var calls = [Int](repeating: 0, count: slices)
    private var failures = [Int](repeating: 0, count: slices)
    /// The newest slice number counted, or -1 before the first call.
    private var newest: Int64 = -1
    private var totalCalls = 0
    private var totalFailures = 0

    /// Counts one call and returns the calls and failures now inside the window.
    /// - Parameters:
    ///   - failed: Whether the call failed.
    ///   - elapsed: The time since a fixed origin (negative values count as zero).
    ///   - window: The window's length (positive).
    mutating func add(failed: Bool, elapsed: Duration, window: Duration) -> (calls: Int, failures: Int) {
        add(failed: failed, elapsedNanoseconds: Self.nanoseconds(elapsed), sliceWidth: Self.sliceWidth(of: window))
    }

    /// Counts one call, with the time already in nanoseconds (the per-call path).
    /// - Parameters:
    ///   - failed: Whether the call failed.
    ///   - elapsedNanoseconds: Nanoseconds since a fixed origin (negative values count as zero).
    ///   - sliceWidth: ``sliceWidth(of:)`` of the window.
    package mutating func add(failed: Bool, elapsedNanoseconds: Int64, sliceWidth: Int64) -> (calls: Int, failures: Int) {
        add(calls: 1, failures: failed ? 1 : 0, elapsedNanoseconds: elapsedNanoseconds, sliceWidth: sliceWidth)
    }

    /// Counts `calls` calls and `failures` failures (either may be zero: adding nothing only moves
    /// the window to now) and returns the totals now inside the window.
    /// - Parameters:
    ///   - calls: Calls to count.
    ///   - failures: Failures to count.
    ///   - elapsedNanoseconds: Nanoseconds since a fixed origin (negative values count as zero).
    ///   - sliceWidth: ``sliceWidth(of:)`` of the window.
    package mutating func add(calls added: Int, failures failed: Int, elapsedNanoseconds: Int64, sliceWidth: Int64) -> (
        calls: Int, failures: Int
    ) {
        // A clock that steps back counts in the newest slice rather than reopening an old one.
        let current = max(newest, max(0, elapsedNanoseconds) / sliceWidth)
        let count = Int64(Self.slices)
        if current > newest {
            // The slices the window moved past are emptied as their slots are reused.
            var slice = current - min(current - newest, count) + 1
            while slice <= current {
                let index = Int(slice % count)
                totalCalls -= calls[index]
                totalFailures -= failures[index]
                calls[index] = 0
                failures[index] = 0
                slice += 1
            }
            newest = current
        }
        let index = Int(current % count)
        calls[index] += added
        totalCalls += added
        failures[index] += failed
        totalFailures += failed
        return (totalCalls, totalFailures)
    }

    /// The time on `clock` in nanoseconds since the process's origin (``Moment``): the time the
    /// per-host windows (retry budget, circuit breaker) count in.
    package static func elapsedNanoseconds(on clock: any TimeSource) -> Int64 {
        nanoseconds(Moment.now(on: clock).sinceOrigin)
    }

    /// The width of one slice of a window, in nanoseconds (at least 1).
    package static func sliceWidth(of window: Duration) -> Int64 {
        max(1, nanoseconds(window) / Int64(slices))
    }

    /// A duration in nanoseconds, saturating far from overflow.
    package static func nanoseconds(_ duration: Duration) -> Int64 {
        let nanoseconds = duration.attoseconds / 1_000_000_000
        return Int64(exactly: nanoseconds) ?? (nanoseconds < 0 ? Int64.min / 2 : Int64.max / 2)
    }
}
