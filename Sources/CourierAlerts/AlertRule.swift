import Courier

/// When ``FailureAlerts`` raises an alert.
///
/// ```swift
/// let rules = [
///     AlertRule(name: "payments-down", scope: .team("payments"), trigger: .consecutiveFailures(5)),
///     AlertRule(name: "error-rate", scope: .eachEndpoint,
///               trigger: .errorRate(threshold: 0.5, window: .seconds(60), minimumCalls: 20)),
/// ]
/// ```
public struct AlertRule: Sendable, Hashable {
    /// Which calls a rule watches, and how they are grouped.
    public enum Scope: Sendable, Hashable {
        /// Calls of one endpoint label (see `EndpointLabels` in Courier).
        case endpoint(String)
        /// Calls of one team.
        case team(String)
        /// Every call, counted separately per endpoint label.
        case eachEndpoint
        /// Every call with a team, counted separately per team.
        case eachTeam
    }

    /// What trips the rule.
    public enum Trigger: Sendable, Hashable {
        /// This many failures in a row (at least 1). Clears at the next success.
        case consecutiveFailures(Int)
        /// The share of failed calls over the last `window` reaches `threshold` (0 to 1), once at
        /// least `minimumCalls` calls fell in the window. Clears when the share drops below the
        /// threshold with at least `minimumCalls` calls in the window.
        case errorRate(threshold: Double, window: Duration, minimumCalls: Int)
    }

    /// A name for the alert's receiver.
    public var name: String
    /// The calls watched.
    public var scope: Scope
    /// What trips the rule.
    public var trigger: Trigger
    /// The outcomes that count as failures; transport errors, timeouts, 5xx, decoding failures and
    /// calls an open circuit breaker refused by default. Other outcomes count as successes;
    /// cancellations are not counted. `[.circuitOpen]` with ``Trigger/consecutiveFailures(_:)`` of 1
    /// watches circuit breakers: it trips when a breaker refuses a call and recovers at the next success.
    public var failures: Set<CallOutcome>
    /// The least time between two alerts of this rule for one group (rate limit): 5 minutes by
    /// default. A trip inside it is not sent, and neither is its recovery.
    public var minimumInterval: Duration

    /// The outcomes counted as failures by default.
    public static let defaultFailures: Set<CallOutcome> = [.transport, .timeout, .serverError, .decoding, .circuitOpen]

    /// Creates a rule.
    /// - Parameters:
    ///   - name: A name for the receiver.
    ///   - scope: The calls watched.
    ///   - trigger: What trips the rule.
    ///   - failures: The outcomes counted as failures.
    ///   - minimumInterval: The least time between two alerts for one group.
    public init(
        name: String, scope: Scope, trigger: Trigger, failures: Set<CallOutcome> = AlertRule.defaultFailures,
        minimumInterval: Duration = .seconds(300)
    ) {
        self.name = name
        self.scope = scope
        self.trigger = trigger
        self.failures = failures
        self.minimumInterval = minimumInterval
    }

    /// Checks the values.
    /// - Throws: `ConfigurationError` (key `alerts.<name>`) for values out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        func invalid(_ allowed: String) -> ConfigurationError {
            ConfigurationError(key: "alerts.\(name)", value: nil, allowed: allowed, source: source)
        }
        if name.isEmpty { throw invalid("a non-empty name") }
        switch trigger {
        case .consecutiveFailures(let count):
            if !(1...100_000).contains(count) { throw invalid("consecutiveFailures from 1 to 100000") }
        case .errorRate(let threshold, let window, let minimumCalls):
            if !(threshold > 0 && threshold <= 1) { throw invalid("an errorRate above 0 and at most 1") }
            if window <= .zero || window > .seconds(86_400) { throw invalid("a window above 0 and at most 86400 seconds") }
            if !(1...1_000_000).contains(minimumCalls) { throw invalid("minimumCalls from 1 to 1000000") }
        }
        if minimumInterval < .zero { throw invalid("a minimumInterval of 0 or more") }
    }

    /// The group a call falls in for this rule, or `nil` when the rule does not watch it.
    func group(of record: CallRecord) -> String? {
        switch scope {
        case .endpoint(let label): record.endpoint == label ? label : nil
        case .team(let team): record.team == team ? team : nil
        case .eachEndpoint: record.endpoint
        case .eachTeam: record.team
        }
    }
}
