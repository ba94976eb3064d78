/// How soon a waiting call starts when its ``RequestQueue`` has a free slot.
///
/// Higher priorities start first; calls of the same priority start in the order they arrived.
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Background work: starts after every waiting `normal` and `high` call.
    case low = 0
    /// The default.
    case normal = 1
    /// Starts before every waiting `normal` and `low` call.
    case high = 2

    /// Orders by urgency: `low < normal < high`.
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `low`, `normal` or `high`.
    public var description: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        }
    }
}

/// Whether a call may share one transfer with identical calls already in flight on its queue.
///
/// See ``RequestQueue`` for what sharing means for each caller.
public enum Deduplication: Sendable, Hashable {
    /// Share when the method is `GET` or `HEAD` and the URL and the queue's varying headers
    /// (``RequestQueue/Limits/varyingHeaderNames``) are the same. The default.
    case automatic
    /// Never share this call's transfer.
    case never
    /// Share with every in-flight call of the same queue that names the same key, whatever the
    /// method. Use it for a non-idempotent call only when the caller knows the calls are the same.
    case key(String)
}
