import Foundation
import HTTPTypes
import Logging

/// Repeats a call that failed transiently, as ``RetryPolicy`` allows. An application middleware:
/// every attempt passes the network middleware and the transport again, and
/// ``RequestMetrics/attempts`` counts them.
///
/// The client installs it last among the application middleware when
/// ``ClientConfiguration/retry`` is set (or `retry` in the configuration file). Waits are on the
/// call's clock (``RequestContext/clock``) and never run past its deadline; cancellation during a
/// wait ends the call at once.
///
/// Retries draw on a ``RetryBudget`` per host (the request's authority), shared by every call of
/// this middleware, so by every call of one client: when the host's budget is spent, a failed
/// attempt ends the call as it is.
public struct RetryMiddleware: Middleware {
    /// The policy.
    public let policy: RetryPolicy
    private let wallClock: @Sendable () -> Date
    private let random: @Sendable () -> Double
    /// `policy.retryableStatuses` as one bit per status 0..<640, so the check after every
    /// response hashes nothing.
    private let retryableBits: [UInt64]
    /// The calls and retries of each host, for the budget.
    private var ledger: RetryBudgetLedger

    /// Creates the middleware.
    /// - Parameters:
    ///   - policy: When and how often to retry.
    ///   - budget: How many retries it may add to each host's traffic (the client passes
    ///     ``ClientConfiguration/resilience``'s).
    ///   - wallClock: The wall-clock time, for `Retry-After` dates.
    ///   - random: Numbers in `0..<1` for the jitter.
    public init(
        policy: RetryPolicy, budget: RetryBudget = RetryBudget(), wallClock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        var bits = [UInt64](repeating: 0, count: 10)
        for status in policy.retryableStatuses where (0..<640).contains(status) { bits[status / 64] |= 1 << UInt64(status % 64) }
        self.retryableBits = bits
        self.ledger = RetryBudgetLedger(budget: budget)
        self.wallClock = wallClock
        self.random = random
    }

    /// Creates the middleware on a budget ledger it shares (with hedging, which draws from the
    /// same budget).
    init(policy: RetryPolicy, ledger: RetryBudgetLedger) {
        self.init(policy: policy)
        self.ledger = ledger
    }

    /// Runs `next`, again after a backoff while the policy allows it.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        guard policy.maxAttempts > 1, RepeatRule.mayRepeat(request, body: body) else {
            return try await next(request, body, context)
        }
        // Only calls that may be retried count toward the budget: the share is of retryable traffic.
        let host = request.authority ?? ""
        ledger.deposit(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: context.clock))
        var attempt = 1
        while true {
            let outcome: Result<TransportResponse, NetworkError>
            do {
                let response = try await next(request, body, context)
                // The common case: an answer that is not retried goes straight back.
                guard isRetryable(response.head.status.code) else { return response }
                outcome = .success(response)
            } catch {
                let failure = NetworkError.converting(error, phase: context.recorder.phase)
                guard RetryPolicy.isTransient(failure) else { throw failure }
                outcome = .failure(failure)
            }
            let wait: Duration
            let reason: String
            switch outcome {
            case .success(let response):
                if let header = response.head.headerFields[.retryAfter] {
                    guard let asked = RetryAfter.parse(header, now: wallClock()), asked <= policy.maxRetryAfter else { return response }
                    wait = asked
                } else {
                    wait = policy.backoff(beforeRetry: attempt, random: random())
                }
                reason = "status \(response.head.status.code)"
            case .failure(let error):
                wait = policy.backoff(beforeRetry: attempt, random: random())
                reason = error.shortDescription
            }
            // Give up when attempts are used up or the wait would reach the deadline.
            let clock = context.clock
            let wakeAt = clock.now.advanced(by: wait)
            guard attempt < policy.maxAttempts, wakeAt < context.deadline else {
                return try outcome.get()
            }
            guard ledger.withdraw(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: clock)) else {
                context.recorder.update { $0.retryRefusedByBudget = true }
                context.logger.debug(
                    "courier.call.retry_budget_spent",
                    metadata: ["courier.attempt": .stringConvertible(attempt), "courier.reason": .string(reason)])
                return try outcome.get()
            }
            context.logger.debug(
                "courier.call.retrying",
                metadata: [
                    "courier.attempt": .stringConvertible(attempt + 1), "courier.reason": .string(reason),
                    "courier.wait_ms": .stringConvertible(wait.wholeMilliseconds),
                ])
            // The abandoned response's body stream is dropped here, which stops its transfer.
            guard await clock.sleep(until: wakeAt) else { throw NetworkError.cancelled(phase: context.recorder.phase) }
            attempt += 1
        }
    }

    /// Whether a status is in the policy's retryable statuses.
    private func isRetryable(_ status: Int) -> Bool {
        guard (0..<640).contains(status) else { return false }
        return retryableBits[status / 64] & (1 << UInt64(status % 64)) != 0
    }
}
