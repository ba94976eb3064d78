/// The `resilience` object of a configuration file (see ``ClientConfiguration/applyingFile(at:)``).
struct ResilienceFile: Decodable {
    var retryBudget: RetryBudgetFile?
    var circuitBreaker: CircuitBreakerFile?
    var deadlineHeader: String?
    var hedging: HedgingFile?
    var retriesUnsentRequests: Bool?

    struct HedgingFile: Decodable {
        var percentile: Double?
        var window: Double?
        var minimumSamples: Double?
        var maxExtraShare: Double?
        var minimumDelayMs: Double?
    }

    struct RetryBudgetFile: Decodable {
        var share: Double?
        var minPerSecond: Double?
        var window: Double?
    }

    struct CircuitBreakerFile: Decodable {
        var consecutiveFailures: Double?
        var failureRatio: Double?
        var minimumCalls: Double?
        var window: Double?
        var openDuration: Double?
        var statuses: [Double]?
    }
}

extension ClientConfiguration {
    /// Applies a file's `resilience` object on top of ``resilience``: the keys it names change, the
    /// others keep their values; a `circuitBreaker` or `hedging` object (even `{}`) turns the breaker
    /// or hedging on.
    mutating func applyResilience(_ file: ResilienceFile, source: String) throws(ConfigurationError) {
        if let budget = file.retryBudget {
            let prefix = "resilience.retryBudget."
            if let share = budget.share { resilience.retryBudget.share = share }
            if let value = budget.minPerSecond {
                resilience.retryBudget.minPerSecond = try Self.wholeNumber(value, key: prefix + "minPerSecond", source: source)
            }
            if let seconds = budget.window {
                resilience.retryBudget.window = try Self.duration(seconds: seconds, key: prefix + "window", source: source)
            }
        }
        if let name = file.deadlineHeader { resilience.deadlineHeader = name }
        if let value = file.retriesUnsentRequests { resilience.retriesUnsentRequests = value }
        if let hedging = file.hedging {
            let prefix = "resilience.hedging."
            var policy = resilience.hedging ?? HedgingPolicy()
            if let value = hedging.percentile { policy.percentile = value }
            if let value = hedging.window { policy.window = try Self.wholeNumber(value, key: prefix + "window", source: source) }
            if let value = hedging.minimumSamples {
                policy.minimumSamples = try Self.wholeNumber(value, key: prefix + "minimumSamples", source: source)
            }
            if let value = hedging.maxExtraShare { policy.maxExtraShare = value }
            if let value = hedging.minimumDelayMs {
                guard value.isFinite, value >= 0, value <= 60_000 else {
                    throw ConfigurationError(key: prefix + "minimumDelayMs", value: "\(value)", allowed: "0 to 60000", source: source)
                }
                policy.minimumDelay = .milliseconds(Int64(value))
            }
            resilience.hedging = policy
        }
        if let breaker = file.circuitBreaker {
            let prefix = "resilience.circuitBreaker."
            var policy = resilience.circuitBreaker ?? CircuitBreakerPolicy()
            if let value = breaker.consecutiveFailures {
                policy.consecutiveFailures = try Self.wholeNumber(value, key: prefix + "consecutiveFailures", source: source)
            }
            if let ratio = breaker.failureRatio { policy.failureRatio = ratio }
            if let value = breaker.minimumCalls {
                policy.minimumCalls = try Self.wholeNumber(value, key: prefix + "minimumCalls", source: source)
            }
            if let seconds = breaker.window { policy.window = try Self.duration(seconds: seconds, key: prefix + "window", source: source) }
            if let seconds = breaker.openDuration {
                policy.openDuration = try Self.duration(seconds: seconds, key: prefix + "openDuration", source: source)
            }
            if let statuses = breaker.statuses {
                policy.failingStatuses = Set(
                    try statuses.map { value throws(ConfigurationError) in
                        try Self.wholeNumber(value, key: prefix + "statuses", source: source)
                    })
            }
            resilience.circuitBreaker = policy
        }
    }
}
