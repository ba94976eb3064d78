import Courier

/// The circuit breaker and hedging as a wing: for a configuration whose `Resilience` has a
/// `circuitBreaker` or `hedging` policy, their once-per-call links below retry, the breaker first
/// (as before the move: a call the open circuit refuses sends no copy). Found by the kernel by this
/// enum's mangled name (`knownWings`).
package enum LinkedWing: Wing {
    /// The breaker's and hedging's keys are the kernel's, beside their policies.
    package static var keys: [ConfigurationKey] { [] }

    package static func parts(for setup: WingSetup) throws(ConfigurationError) -> WingParts? {
        let resilience = setup.configuration.resilience
        guard resilience.circuitBreaker != nil || resilience.hedging != nil else { return nil }
        var outer: [any Middleware] = []
        let breaker = resilience.circuitBreaker.map { CircuitBreaker(policy: $0, exports: setup.configuration.exportsMetrics) }
        if let breaker { outer.append(CircuitBreakerLink(breaker: breaker)) }
        if let hedging = resilience.hedging {
            outer.append(HedgingLink(policy: hedging, ledger: setup.ledger, depositsCalls: !setup.hasRetry))
        }
        return WingParts(outer: outer, value: breaker)
    }

    package static func describe(_ configuration: ClientConfiguration) -> [String] { [] }
}

extension NetworkClient {
    /// The state of each host's circuit (see `CircuitBreakerPolicy`), by authority (`host:port`
    /// when the URL names a port); empty without a breaker. For health endpoints and dashboards.
    public var circuitStates: [String: CircuitState] { (wingValue(LinkedWing.self) as? CircuitBreaker)?.states ?? [:] }
}
