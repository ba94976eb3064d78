import Courier
import Foundation
import Logging

/// One alert from ``FailureAlerts``: a rule tripped, or it recovered.
public struct Alert: Sendable, Hashable {
    /// Tripped or recovered.
    public enum Kind: String, Sendable, Hashable {
        /// The rule's condition started to hold.
        case tripped
        /// The condition no longer holds.
        case recovered
    }

    /// Tripped or recovered.
    public var kind: Kind
    /// The rule's name.
    public var rule: String
    /// The group (endpoint label or team) the rule counted.
    public var group: String
    /// The endpoint label of the last call counted.
    public var endpoint: String
    /// The team of the last call counted, if any.
    public var team: String?
    /// Failures counted: in a row, or in the window.
    public var failures: Int
    /// Calls counted: in a row (equal to `failures`), or in the window.
    public var calls: Int
    /// The last failure's bounded description (for example `timed_out.connect`), on a trip.
    public var lastError: String?
    /// The last failure as one redacted line, on a trip.
    public var lastErrorDetail: String?
    /// A request id of a failed call, to find its log lines.
    public var sampleRequestID: String

    /// Creates an alert; ``lastError`` and ``lastErrorDetail`` start empty.
    public init(
        kind: Kind, rule: String, group: String, endpoint: String, team: String?, failures: Int, calls: Int, sampleRequestID: String
    ) {
        self.kind = kind
        self.rule = rule
        self.group = group
        self.endpoint = endpoint
        self.team = team
        self.failures = failures
        self.calls = calls
        self.sampleRequestID = sampleRequestID
    }
}

/// Where ``FailureAlerts`` sends alerts. Delivery runs on the alerts' own task: a slow or
/// failing sink delays only later alerts, never a call.
public protocol AlertSink: Sendable {
    /// Sends one alert.
    /// - Parameter alert: The alert.
    func deliver(_ alert: Alert) async
}

/// Hands alerts to a closure.
public struct ClosureAlertSink: AlertSink {
    private let body: @Sendable (Alert) async -> Void

    /// Creates the sink.
    /// - Parameter body: Called for each alert, one at a time.
    public init(_ body: @escaping @Sendable (Alert) async -> Void) {
        self.body = body
    }

    /// Calls the closure.
    public func deliver(_ alert: Alert) async { await body(alert) }
}

/// Writes alerts as log lines: `courier.alert.tripped` at `error`, `courier.alert.recovered` at
/// `notice` by default.
public struct LogAlertSink: AlertSink {
    private let logger: Logger
    private let tripLevel: Logger.Level
    private let recoveryLevel: Logger.Level

    /// Creates the sink.
    /// - Parameters:
    ///   - logger: The logger.
    ///   - tripLevel: The level of trips.
    ///   - recoveryLevel: The level of recoveries.
    public init(logger: Logger, tripLevel: Logger.Level = .error, recoveryLevel: Logger.Level = .notice) {
        self.logger = logger
        self.tripLevel = tripLevel
        self.recoveryLevel = recoveryLevel
    }

    /// Logs the alert.
    public func deliver(_ alert: Alert) async {
        var metadata: Logger.Metadata = [
            "courier.alert.rule": .string(alert.rule), "courier.alert.group": .string(alert.group),
            "courier.endpoint": .string(alert.endpoint), "courier.alert.failures": .stringConvertible(alert.failures),
            "courier.alert.calls": .stringConvertible(alert.calls), "courier.request_id": .string(alert.sampleRequestID),
        ]
        if let team = alert.team { metadata["courier.team"] = .string(team) }
        if let error = alert.lastError { metadata["courier.error"] = .string(error) }
        logger.log(
            level: alert.kind == .tripped ? tripLevel : recoveryLevel,
            alert.kind == .tripped ? "courier.alert.tripped" : "courier.alert.recovered",
            metadata: metadata)
    }
}
