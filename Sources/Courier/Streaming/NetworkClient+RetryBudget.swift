extension NetworkClient {
    /// The host whose retry budget an endpoint's calls draw on: the authority of the request the
    /// client composes for it (``RequestBuilder``, the one place a request is built); empty when
    /// it cannot be built (the call itself then fails as `invalid_request`).
    func retryBudgetHost(of endpoint: some Endpoint) -> String {
        (try? RequestBuilder.build(endpoint, client: self, limits: callTemplate).get())?.request.authority ?? ""
    }

    /// Takes one retry of `host` from the client's budget (``Resilience/retryBudget``), the one
    /// retry, hedging and resending draw on: for readings that go on over several connections
    /// (event streams reconnecting, downloads resuming).
    func drawRetryBudget(host: String) -> Bool {
        chain.ledger.withdraw(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: configuration.timeSource))
    }
}
