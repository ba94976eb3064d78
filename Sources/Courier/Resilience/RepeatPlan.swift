/// Whether, and when, a reading over several connections goes again: a download resuming or
/// starting over, an event stream reconnecting. The one policy both ask, after their own reason
/// (a cut a download can resume from; a stream that ended): the request may go again at all
/// (``RepeatRule``, after a failure: an idempotent method or an `Idempotency-Key`), the host's
/// retry budget pays for it (``Resilience/retryBudget``, as for retry and hedging), and it waits
/// the given backoff on the client's clock, within the reading's end when it has one.
package struct RepeatPlan: Sendable {
    /// Why it does not go again.
    package enum Refusal: Error, Equatable {
        /// The request may not go again (``RepeatRule``).
        case notRepeatable
        /// The reading's end has come (before or during the wait).
        case pastEnd
        /// The host's retry budget refused one more.
        case budget
        /// The reading's task was cancelled during the wait.
        case cancelled
    }

    let client: NetworkClient
    /// The host whose budget pays, as the first connection's request names it.
    package let host: String
    /// Whether the request may go again at all.
    package let requestMayRepeat: Bool
    /// The reading's end, when it has one (a download's `DownloadOptions.maxDuration`).
    private(set) var end: Moment?
    /// The request's method and URL (`GET https://…`).
    package let target: String

    /// The plan for `endpoint`'s request as the client composes it (``RequestBuilder``); one that
    /// cannot be built never goes again (its call fails as `invalid_request` itself).
    package init(_ endpoint: some Endpoint, on client: NetworkClient, end: Moment? = nil) {
        let terms = client.repeatTerms(of: endpoint)
        self.client = client
        host = terms.host
        requestMayRepeat = terms.mayRepeat
        target = terms.target
        self.end = end
    }

    /// Whether the reading's end has come.
    package var isPastEnd: Bool { end.map { client.now() >= $0 } ?? false }

    /// Goes again after `wait`, or says why not: the rule, then the end (refused at once when the
    /// wait would reach it), then the budget, drawn only for a repetition that will happen, then
    /// the wait on the client's clock.
    /// - Throws: ``Refusal``.
    package func again(after wait: Duration) async throws(Refusal) {
        guard requestMayRepeat else { throw .notRepeatable }
        let wake = client.now().advanced(by: max(.zero, wait))
        // An end that comes before the wait is over refuses now: no budget spent, no wait.
        if let end, wake >= end { throw .pastEnd }
        guard client.drawRetryBudget(host: host) else { throw .budget }
        guard wait > .zero else { return }
        guard await client.configuration.timeSource.sleep(until: wake.instant) else { throw .cancelled }
    }

    /// This plan with the reading's end `end`.
    package func ending(at end: Moment?) -> RepeatPlan {
        var plan = self
        plan.end = end
        return plan
    }

    /// The backoff before repetition number `count` (1 for the first): the client's retry policy's
    /// (``RetryPolicy/backoff(beforeRetry:random:)``, full jitter), or the default policy's.
    package func backoff(before count: Int) -> Duration {
        (client.configuration.retry ?? RetryPolicy()).backoff(beforeRetry: count, random: Double.random(in: 0..<1))
    }
}
