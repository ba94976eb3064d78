extension NetworkClient {
    /// What a reading over several connections (a download resuming, an event stream
    /// reconnecting) needs to send its request again: the host whose retry budget pays, and
    /// whether the request may go again at all (``RepeatRule``, after a failure: the server acted on
    /// the first connection's request). From the request the client composes for the endpoint
    /// (``RequestBuilder``, the one place a request is built); `("", false)` when it cannot be
    /// built (the call itself then fails as `invalid_request`).
    func repeatTerms(of endpoint: some Endpoint) -> (host: String, mayRepeat: Bool, target: String) {
        guard let built = try? RequestBuilder.build(endpoint, client: self, limits: callTemplate).get() else { return ("", false, "") }
        return (
            built.request.authority ?? "", RepeatRule.mayRepeat(built.request, body: built.body),
            built.request.describedURL(after: built.request.method.rawValue + " ")
        )
    }

    /// Takes one retry of `host` from the client's budget (``Resilience/retryBudget``), the one
    /// retry, hedging and resending draw on: for readings that go on over several connections
    /// (event streams reconnecting, downloads resuming).
    func drawRetryBudget(host: String) -> Bool {
        chain.ledger.withdraw(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: configuration.timeSource))
    }
}
