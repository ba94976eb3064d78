/// How a long transfer (a download, an event stream, JSON Lines) is bounded in time: the request
/// timeout bounds only the wait for each connection's head; after the head, a stall limit (no bytes
/// for that long fails it) and an optional end for the whole transfer, never the request timeout.
///
/// Decided once per call, when the call is built (``Call``); transports take the transfer's end (or
/// ``noEnd``) as their backstop. A connection's alarm rings at its head's deadline (a ``LongCall``'s
/// connection's, or a JSON Lines call's own); the call's, at the transfer's end when it has one.
/// Once the head is in, a ``BodyWatch`` gives each wait for bytes until the stall limit.
package struct TransferBounds: Sendable {
    /// The longest the body may go without a byte: the client's ``NetworkClient/bodyStallLimit``.
    package var stall: Duration
    /// When the whole transfer must have ended (on the configuration's clock), or `nil` for no end.
    package var end: Moment?

    package init(stall: Duration, end: Moment?) {
        self.stall = stall
        self.end = end
    }

    /// The deadline a transfer with no end hands its transport as a backstop: a year, which only
    /// keeps a library's own timer finite; the stall limit is what bounds the transfer.
    static let noEnd: Duration = .seconds(365 * 86_400)
}

/// Watches a long transfer's body once its head has arrived (see ``TransferBounds``): each wait for
/// bytes is given until the stall limit, or the transfer's end when that comes first. An alarm that
/// rings ends the connection's waits the way a deadline does (the transport stops the transfer),
/// and the connection fails as ``NetworkError/Kind/timedOut`` naming the limit it passed.
///
/// The time the caller spends between reads is not counted: a reader that is behind pauses the
/// transfer, which is not a stall.
final class BodyWatch: Sendable {
    /// Which limit ended the transfer.
    private enum Limit {
        case stall, end
    }

    private let bounds: TransferBounds
    private let signal: CallDeadline
    private let clock: any TimeSource
    /// The limit that rang first, if one did.
    private let rang = Locked<Limit?>(nil)

    /// A watch over the body of the call whose deadline is `signal`, on `clock`.
    init(_ bounds: TransferBounds, signal: CallDeadline, clock: any TimeSource) {
        self.bounds = bounds
        self.signal = signal
        self.clock = clock
    }

    /// Sets the alarm for one wait for bytes: at the stall limit from now, or at the transfer's
    /// end when sooner. Cancel it with ``disarm(_:)`` when the wait is over.
    func arm() -> TimeSourceAlarm {
        let stallAt = Moment.now(on: clock).advanced(by: bounds.stall)
        let (moment, limit): (Moment, Limit) =
            if let end = bounds.end, end < stallAt { (end, .end) } else { (stallAt, .stall) }
        return clock.schedule(at: moment.instant) { [self] in
            // A deadline or a shutdown that ended the call first keeps its own report.
            guard !signal.hasPassed else { return }
            rang.withLock { $0 = $0 ?? limit }
            signal.pass()
        }
    }

    /// Cancels a wait's alarm.
    func disarm(_ alarm: TimeSourceAlarm) {
        _ = clock.cancelAlarm(alarm)
    }

    /// The call's failure when a limit ended the transfer, or `nil` when none did.
    var failure: NetworkError? {
        switch rang.withLock({ $0 }) {
        case .stall?:
            NetworkError(
                kind: .timedOut, phase: .receiving,
                message: "no bytes arrived for \(bounds.stall), the stall limit (\(ConfigurationKey.timeoutsStall.name))")
        case .end?:
            NetworkError(kind: .timedOut, phase: .receiving, message: "the transfer did not end by its total time limit")
        case nil:
            nil
        }
    }
}
