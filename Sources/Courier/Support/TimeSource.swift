/// Where Courier reads the time for metrics, retry windows, refresh limits and alert windows.
///
/// The default, ``SystemTimeSource``, reads the monotonic clock. Tests inject a
/// ``ManualTimeSource`` and move it by hand, so timing is tested without sleeping. (Deadlines
/// always run on the real clock: a manual clock must not stop a call from timing out.)
public protocol TimeSource: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }
}

/// The monotonic system clock (`ContinuousClock`).
public struct SystemTimeSource: TimeSource {
    /// Creates the system time source.
    public init() {}

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { ContinuousClock.now }
}

/// A clock that moves only when told to, for tests.
///
/// ```swift
/// let time = ManualTimeSource()
/// var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
/// configuration.timeSource = time
/// time.advance(by: .seconds(5))
/// ```
public final class ManualTimeSource: TimeSource {
    private let current: Locked<ContinuousClock.Instant>

    /// Creates a clock that reads the real time once and then stands still.
    public init() {
        current = Locked(ContinuousClock.now)
    }

    /// The instant the clock shows.
    public var now: ContinuousClock.Instant { current.withLock { $0 } }

    /// Moves the clock forward.
    /// - Parameter duration: How far; negative durations are ignored (the clock is monotonic).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        current.withLock { $0 = $0.advanced(by: duration) }
    }
}
