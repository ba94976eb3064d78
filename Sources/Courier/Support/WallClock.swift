import Foundation

/// Wall-clock seconds on a ``TimeSource``: HTTP dates are wall-clock times, while time sources
/// count monotonic instants.
///
/// The wall clock is read once, beside the monotonic one, and every later reading is that
/// moment plus the time source's progress since. A test that advances a `ManualTimeSource`
/// therefore ages stored responses, and two processes agree on the time as their clocks do.
package enum WallClock {
    private static let anchor = (wall: Date().timeIntervalSince1970, instant: ContinuousClock.now)

    /// Seconds since 1970 now, on `time`.
    package static func seconds(on time: any TimeSource) -> Int64 {
        let elapsed = anchor.instant.duration(to: time.now)
        return Int64((anchor.wall + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18).rounded(.down))
    }
}
