/// An instant of the continuous clock as a plain `Duration` since one origin per process: how
/// Courier keeps time inside a call.
///
/// `ContinuousClock.Instant` is not frozen, so its size is known only at run time: a struct
/// holding one (a call's context, an alarm table's slot) is copied through value witnesses, an
/// array of them goes through unspecialised code, and an async function allocates task memory
/// for each local one. `Duration` is frozen. Public API keeps `ContinuousClock.Instant`; the call
/// path converts at its edges (``init(_:)`` and ``instant``), both exact.
package struct Moment: Comparable, Sendable {
    /// Time since ``origin``.
    var sinceOrigin: Duration

    /// The instant every moment counts from, read once per process.
    static let origin = ContinuousClock.now

    /// The moment of `instant`.
    package init(_ instant: ContinuousClock.Instant) {
        sinceOrigin = Self.origin.duration(to: instant)
    }

    private init(sinceOrigin: Duration) {
        self.sinceOrigin = sinceOrigin
    }

    /// The moment `time` shows now. Not inlined: the clock's instant is a value of run-time size,
    /// and read here it lives on this function's stack, not in an async caller's task memory.
    @inline(never)
    package static func now(on time: any TimeSource) -> Moment {
        Moment(time.now)
    }

    /// The system clock's moment now (see ``now(on:)``).
    @inline(never)
    package static func now() -> Moment {
        Moment(ContinuousClock.now)
    }

    /// The same point as a `ContinuousClock.Instant`.
    package var instant: ContinuousClock.Instant { Self.origin.advanced(by: sinceOrigin) }

    /// The moment `duration` later.
    package func advanced(by duration: Duration) -> Moment {
        Moment(sinceOrigin: sinceOrigin + duration)
    }

    /// The time from this moment to `other` (negative when `other` is earlier).
    package func duration(to other: Moment) -> Duration {
        other.sinceOrigin - sinceOrigin
    }

    package static func < (lhs: Moment, rhs: Moment) -> Bool {
        lhs.sinceOrigin < rhs.sinceOrigin
    }
}
