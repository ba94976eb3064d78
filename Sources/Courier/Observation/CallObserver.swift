/// Receives every finished call of a client: its outcome, labels and ``RequestMetrics``.
///
/// Use it to export metrics, keep statistics or raise alerts without touching call sites.
/// `callFinished` runs on the calling task right after the call's result is known, before the
/// caller gets it: keep it short and never block (hand slow work to your own task, as
/// `FailureAlerts` in `CourierAlerts` does).
///
/// ```swift
/// struct SlowCallCounter: CallObserver {
///     let slow = Locked(0)
///     func callFinished(_ record: CallRecord) {
///         if let total = record.metrics.total, total > .seconds(1) { slow.withLock { $0 += 1 } }
///     }
/// }
/// let client = try NetworkClient(configuration: configuration, transport: transport, observers: [SlowCallCounter()])
/// ```
public protocol CallObserver: Sendable {
    /// Called once per call, success or failure.
    /// - Parameter record: The call.
    func callFinished(_ record: CallRecord)
}

/// Turns API types into metric labels, with a bound on how many distinct labels there can be.
///
/// A label is the endpoint's type name without its module (`GetUser`). Generic or nested types
/// count as distinct labels; past ``limit`` distinct labels, new ones become ``overflowLabel``,
/// so a metrics backend never sees an unbounded label set.
public final class EndpointLabels: Sendable {
    /// The label used once ``limit`` distinct labels exist.
    public static let overflowLabel = "other"
    /// The most distinct labels handed out.
    public let limit: Int
    /// The labels by type; calls of one endpoint tend to come in runs.
    private let labels = Locked(RecentTable<ObjectIdentifier, String>())
    /// The names given by endpoints themselves (``Endpoint/endpointName``), counted against the
    /// same ``limit`` with the type labels.
    private let names = Locked(Set<String>())

    /// The process-wide instance (limit 500).
    public static let shared = EndpointLabels(limit: 500)

    /// Creates a label table.
    /// - Parameter limit: The most distinct labels; at least 1.
    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The label for an API type.
    /// - Parameter type: The endpoint or API object type.
    /// - Returns: Its bounded label.
    public func label(for type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let known = labels.withLock({ $0.value(for: key) }) { return known }
        let name = Self.name(of: type)
        return labels.withLock { table in
            if let known = table.value(for: key) { return known }
            guard table.count < limit else { return Self.overflowLabel }
            table.insert(name, for: key)
            return name
        }
    }

    /// The label for an endpoint's own name (an OpenAPI `operationID`, say): the name itself while
    /// fewer than ``limit`` distinct names and types were labelled, ``overflowLabel`` after.
    /// - Parameter name: The endpoint's name.
    /// - Returns: Its bounded label.
    public func label(named name: String) -> String {
        names.withLock { names in
            if names.contains(name) { return name }
            guard names.count + labels.withLock({ $0.count }) < limit else { return Self.overflowLabel }
            names.insert(name)
            return name
        }
    }

    private static func name(of type: Any.Type) -> String {
        let full = String(reflecting: type)
        // Drop the module prefix: "MyService.GetUser" -> "GetUser".
        guard let dot = full.firstIndex(of: "."), !full.hasPrefix("(") else { return full }
        return String(full[full.index(after: dot)...])
    }
}
