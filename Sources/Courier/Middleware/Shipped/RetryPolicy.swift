import Foundation
import HTTPTypes

/// When and how often ``RetryMiddleware`` repeats a call.
///
/// A call is retried only when all of these hold:
/// - its method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) or it carries an
///   `Idempotency-Key` header;
/// - its body, if any, can be replayed (every body Courier builds can);
/// - the attempt answered a status in ``retryableStatuses`` (408, 429, 500, 502, 503, 504 by
///   default), or failed with a transient error: connect failure, connection closed, or a
///   timeout while time is left before the call's deadline;
/// - fewer than ``maxAttempts`` attempts were made, and the wait ends before the call's deadline.
/// - the host's ``RetryBudget`` has a retry left (at most 20% of its calls plus 10 a second, by
///   default; ``ClientConfiguration/resilience``).
///
/// Never retried: cancellation, TLS failures, invalid requests, too-large responses, redirect
/// loops and anything else not listed above.
///
/// The wait is exponential backoff with full jitter: a random duration between zero and
/// `min(maxDelay, baseDelay × 2^(retry − 1))`. A `Retry-After` header (seconds or an HTTP date)
/// replaces it when it asks for at most ``maxRetryAfter``; a longer `Retry-After` ends the
/// retries and returns the response as it is.
public struct RetryPolicy: Sendable, Hashable {
    /// The most attempts, the first included: 3 by default (1 to 10).
    public var maxAttempts = 3
    /// The backoff's first ceiling: 100 ms by default.
    public var baseDelay: Duration = .milliseconds(100)
    /// The backoff's largest ceiling: 5 s by default.
    public var maxDelay: Duration = .seconds(5)
    /// The longest `Retry-After` honoured: 30 s by default.
    public var maxRetryAfter: Duration = .seconds(30)
    /// Statuses that are retried.
    public var retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The allowed range of ``maxAttempts``.
    public static let maxAttemptsRange = 1...10

    /// A policy with every default.
    public init() {}

    /// Checks the values.
    /// - Parameter source: Where they came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the `retry.*` key out of range.
    public func validate(source: String = "code") throws(ConfigurationError) {
        var configuration = ClientConfiguration()
        configuration.retry = self
        try ConfigurationKey.checkBounds(of: configuration, prefix: "retry.", source: source)
        try checkRelations(source: source)
    }

    /// What the key table's ranges cannot say: the largest backoff is not below the first, and
    /// every status is an HTTP status.
    func checkRelations(source: String) throws(ConfigurationError) {
        if maxDelay < baseDelay {
            throw ConfigurationError(
                key: ConfigurationKey.retryMaxDelay.name, value: (ConfigurationKey.documented(maxDelay) ?? "\(maxDelay)") + " seconds",
                allowed: "baseDelay to 300 seconds", source: source)
        }
        if let bad = retryableStatuses.first(where: { !(100...599).contains($0) }) {
            throw ConfigurationError(
                key: ConfigurationKey.retryStatuses.name, value: "\(bad)", allowed: "HTTP statuses 100 to 599", source: source)
        }
    }

    /// The backoff before retry number `retry` (1 for the first retry), with full jitter.
    /// - Parameters:
    ///   - retry: 1 for the wait before the second attempt, 2 before the third, …
    ///   - random: A number in `0..<1`.
    /// - Returns: A duration between zero and the ceiling for that retry.
    public func backoff(beforeRetry retry: Int, random: Double) -> Duration {
        let exponent = min(max(retry - 1, 0), 30)
        let ceiling = min(maxDelay, baseDelay * (1 << exponent))
        return ceiling * min(max(random, 0), 1)
    }

    /// Whether a request may be repeated at all: ``RepeatRule/mayRepeat(_:body:reason:)`` after a failure.
    /// - Parameters:
    ///   - request: The request.
    ///   - body: Its body.
    /// - Returns: `true` for idempotent methods or an `Idempotency-Key`, with a replayable body.
    public static func mayRepeat(_ request: HTTPRequest, body: RequestBody?) -> Bool {
        RepeatRule.mayRepeat(request, body: body)
    }

    /// Whether an error is worth another attempt (the deadline is checked separately).
    /// - Parameter error: The attempt's error.
    /// - Returns: `true` for connect failures, closed connections and timeouts.
    public static func isTransient(_ error: NetworkError) -> Bool {
        [.connectFailure, .connectionClosed, .timedOut].contains(error.kind)
    }

    /// The methods retried without an idempotency key (``RepeatRule/idempotentMethods``).
    public static var idempotentMethods: Set<HTTPRequest.Method> { RepeatRule.idempotentMethods }
    /// The header that makes any method retryable (``RepeatRule/idempotencyKey``).
    public static var idempotencyKey: HTTPField.Name { RepeatRule.idempotencyKey }
}

/// Reads a `Retry-After` header: delay seconds or an HTTP date.
public enum RetryAfter {
    /// The wait a `Retry-After` value asks for.
    /// - Parameters:
    ///   - value: The header value, for example `120` or `Wed, 21 Oct 2026 07:28:00 GMT`.
    ///   - now: The current wall-clock time (for dates).
    /// - Returns: The wait (zero for a date in the past), or `nil` when the value is malformed.
    public static func parse(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let seconds = Int64(text) else { return .seconds(Int64.max / 2_000_000_000) }
            return .seconds(seconds)
        }
        // IMF-fixdate, or the obsolete RFC 850 and asctime forms (RFC 9110, section 5.6.7), read
        // by the cache's parser (a Foundation formatter per call cost about 0.7 ms).
        guard let date = HTTPDate(text) else { return nil }
        let seconds = Double(date.seconds) - now.timeIntervalSince1970
        return seconds <= 0 ? .zero : .milliseconds(Int64(min(seconds, 1e9) * 1000))
    }
}
