import Courier

/// A host's circuit as others see it (`NetworkClient.circuitStates`).
public enum CircuitState: String, Sendable, Hashable {
    /// Calls pass.
    case closed
    /// Calls fail fast with `NetworkError.Kind.circuitOpen`.
    case open
    /// One probe call may pass; the others fail fast.
    case halfOpen = "half_open"
}

/// One host's circuit breaker: a value-type state machine whose transitions return what changed.
/// ``CircuitBreaker`` keeps one per host under its lock and logs and exports the transitions
/// after releasing it.
///
/// Times are nanoseconds since any fixed origin, the same for every call.
struct Circuit: Sendable {
    /// Where the circuit is.
    enum State: Sendable, Equatable {
        /// Calls pass; `failuresInARow` counts the failed attempts since the last success. Goes to
        /// `open` when a failure reaches the policy's limits.
        case closed(failuresInARow: Int)
        /// Calls are refused until `until`; the first call after it becomes the probe (`halfOpen`).
        case open(until: Int64)
        /// One probe may pass (`probing` while it is out); its success goes to `closed`, its
        /// failure back to `open`, and a probe that ended with neither frees the place.
        case halfOpen(probing: Bool)
    }

    /// What a call may do.
    enum Admission: Sendable, Equatable {
        /// Go ahead.
        case pass
        /// Go ahead as the half-open circuit's probe.
        case probe
        /// Fail fast; the circuit may let a probe through after `waitNanoseconds`.
        case refuse(waitNanoseconds: Int64)
    }

    /// How an attempt ended, for the circuit.
    enum Outcome: Sendable, Equatable {
        /// An answer that is not a failure.
        case success
        /// The host's failure (see `CircuitBreakerPolicy`).
        case failure
        /// Neither: cancelled, refused before sending, or the caller's own limit.
        case neutral
    }

    /// A change of state worth telling.
    enum Transition: Sendable, Equatable {
        case opened, halfOpened, closed
    }

    private(set) var state = State.closed(failuresInARow: 0)
    private var window = RateWindow()

    /// The state as others see it.
    var publicState: CircuitState {
        switch state {
        case .closed: .closed
        case .open: .open
        case .halfOpen: .halfOpen
        }
    }

    /// Whether the circuit holds nothing worth keeping at `now`: closed, no failure in a row and
    /// no attempt left in its window.
    mutating func isIdle(now: Int64, sliceWidth: Int64) -> Bool {
        guard case .closed(0) = state else { return false }
        let counts = window.add(calls: 0, failures: 0, elapsedNanoseconds: now, sliceWidth: sliceWidth)
        return counts.calls == 0
    }

    /// Decides whether a call may go to the host now.
    mutating func admit(now: Int64) -> (Admission, Transition?) {
        switch state {
        case .closed:
            return (.pass, nil)
        case .open(let until):
            guard now >= until else { return (.refuse(waitNanoseconds: until - now), nil) }
            state = .halfOpen(probing: true)
            return (.probe, .halfOpened)
        case .halfOpen(let probing):
            if probing { return (.refuse(waitNanoseconds: 0), nil) }
            state = .halfOpen(probing: true)
            return (.probe, nil)
        }
    }

    /// Counts how an admitted attempt ended.
    /// - Parameters:
    ///   - outcome: How it ended.
    ///   - probe: Whether it was admitted as the probe.
    ///   - now: The time it ended.
    ///   - policy: The limits.
    ///   - sliceWidth: `RateWindow.sliceWidth(of: policy.window)`.
    /// - Returns: The transition it caused, if any.
    mutating func record(_ outcome: Outcome, probe: Bool, now: Int64, policy: CircuitBreakerPolicy, sliceWidth: Int64) -> Transition? {
        let reopen = State.open(until: now &+ RateWindow.nanoseconds(policy.openDuration))
        if probe {
            switch outcome {
            case .success:
                state = .closed(failuresInARow: 0)
                window = RateWindow()
                return .closed
            case .failure:
                state = reopen
                return .opened
            case .neutral:
                state = .halfOpen(probing: false)
                return nil
            }
        }
        // An attempt admitted before the circuit opened tells nothing new once it is open.
        guard case .closed(let inARow) = state, outcome != .neutral else { return nil }
        let failed = outcome == .failure
        let counts = window.add(calls: 1, failures: failed ? 1 : 0, elapsedNanoseconds: now, sliceWidth: sliceWidth)
        guard failed else {
            state = .closed(failuresInARow: 0)
            return nil
        }
        let row = inARow + 1
        let ratioTrips = counts.calls >= policy.minimumCalls && Double(counts.failures) >= policy.failureRatio * Double(counts.calls)
        guard row >= policy.consecutiveFailures || ratioTrips else {
            state = .closed(failuresInARow: row)
            return nil
        }
        state = reopen
        return .opened
    }
}
