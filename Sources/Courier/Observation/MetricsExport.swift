import CoreMetrics

/// Exports every call to swift-metrics: whatever backend the service bootstrapped
/// (`MetricsSystem.bootstrap`) receives it; with none, nothing is recorded.
///
/// Metrics, all with bounded label values:
/// - timer `courier_call_duration` (dimensions `endpoint`, `transport`, `outcome`): the whole call;
/// - timer `courier_call_network_duration` (same dimensions): from the first middleware to the
///   last body byte;
/// - counter `courier_call_errors` (dimensions `endpoint`, `transport`, `kind`): failures by
///   ``NetworkError/Kind`` (cancellations are not errors and are not counted);
/// - counter `courier_call_retries` (dimensions `endpoint`, `transport`): attempts beyond the first;
/// - counter `courier_retry_budget_refusals` (dimensions `endpoint`, `transport`): calls that ended
///   without a retry because the host's ``RetryBudget`` was spent;
/// - counter `courier_call_hedges` (dimensions `endpoint`, `transport`, `copy`: `won` or `lost`):
///   calls that sent a hedged copy (``HedgingPolicy``), by whether the copy answered first;
/// - counter `courier_call_resends` (dimensions `endpoint`, `transport`, `by`: `courier` or
///   `transport`): requests sent again because the server cannot have processed them, by Courier
///   (``RequestMetrics/unsentRetries``) or by the transport's own library
///   (``RequestMetrics/transportResends``);
/// - counter `courier_cache_results` (dimensions `endpoint`, `transport`, `result`): what the
///   response cache did, one of `hit`, `miss`, `revalidated` and `stale`
///   (``RequestMetrics/CacheResult``), for calls the cache took part in.
///
/// `endpoint` is an ``EndpointLabels`` label, `transport` the transport's registered name,
/// `outcome` a ``CallOutcome`` and `kind` a kind's snake_case name: no URL, id or header value
/// ever becomes a label. Handles are made once per label set and reused.
public final class MetricsExport: CallObserver {
    private struct Key: Hashable {
        var endpoint: String
        var transport: String
        var detail: String
    }

    private struct Handles {
        var duration: CoreMetrics.Timer
        var network: CoreMetrics.Timer
    }

    /// The timers per label set; calls of one endpoint tend to come in runs.
    private let handles = Locked(RecentTable<Key, Handles>())
    private let errors = Locked<[Key: Counter]>([:])
    private let retries = Locked<[Key: Counter]>([:])
    private let budgetRefusals = Locked<[Key: Counter]>([:])
    private let cacheResults = Locked<[Key: Counter]>([:])
    private let hedges = Locked<[Key: Counter]>([:])
    private let resends = Locked<[Key: Counter]>([:])
    private let factory: (any MetricsFactory)?

    /// Creates an exporter.
    /// - Parameter factory: The metrics backend; `nil` (the default) uses the one bootstrapped in
    ///   `MetricsSystem` at the time each handle is first made.
    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
    }

    /// Counts `count` resends of a call of `key`'s endpoint and transport, made by `by`.
    private func countResends(_ count: Int, by: String, _ key: Key) {
        let resendKey = Key(endpoint: key.endpoint, transport: key.transport, detail: by)
        counter(in: resends, resendKey, "courier_call_resends", [("endpoint", key.endpoint), ("transport", key.transport), ("by", by)])
            .increment(by: Int64(count))
    }

    /// Records one call.
    public func callFinished(_ record: CallRecord) {
        let outcome = record.outcome
        let key = Key(endpoint: record.endpoint, transport: record.metrics.transport, detail: outcome.rawValue)
        let timers = handles.withLock { table in
            if let known = table.value(for: key) { return known }
            let dimensions = [("endpoint", key.endpoint), ("transport", key.transport), ("outcome", key.detail)]
            let made = Handles(
                duration: makeTimer("courier_call_duration", dimensions), network: makeTimer("courier_call_network_duration", dimensions))
            table.insert(made, for: key)
            return made
        }
        if let total = record.metrics.total { timers.duration.recordNanoseconds(total.wholeNanoseconds) }
        if let network = record.metrics.network { timers.network.recordNanoseconds(network.wholeNanoseconds) }
        if let error = record.error, outcome != .cancelled {
            let errorKey = Key(endpoint: key.endpoint, transport: key.transport, detail: error.kind.description)
            counter(
                in: errors, errorKey, "courier_call_errors",
                [("endpoint", key.endpoint), ("transport", key.transport), ("kind", errorKey.detail)]
            )
            .increment()
        }
        if record.metrics.attempts > 1 {
            let retryKey = Key(endpoint: key.endpoint, transport: key.transport, detail: "")
            counter(in: retries, retryKey, "courier_call_retries", [("endpoint", key.endpoint), ("transport", key.transport)])
                .increment(by: Int64(record.metrics.attempts - 1))
        }
        if record.metrics.hedges > 0 {
            let copy = record.metrics.hedgeWon ? "won" : "lost"
            let hedgeKey = Key(endpoint: key.endpoint, transport: key.transport, detail: copy)
            counter(
                in: hedges, hedgeKey, "courier_call_hedges", [("endpoint", key.endpoint), ("transport", key.transport), ("copy", copy)]
            )
            .increment()
        }
        if record.metrics.unsentRetries > 0 { countResends(record.metrics.unsentRetries, by: "courier", key) }
        if record.metrics.transportResends > 0 { countResends(record.metrics.transportResends, by: "transport", key) }
        if record.metrics.retryRefusedByBudget {
            let refusalKey = Key(endpoint: key.endpoint, transport: key.transport, detail: "")
            counter(
                in: budgetRefusals, refusalKey, "courier_retry_budget_refusals", [("endpoint", key.endpoint), ("transport", key.transport)]
            )
            .increment()
        }
        if let result = record.metrics.cache {
            let cacheKey = Key(endpoint: key.endpoint, transport: key.transport, detail: result.rawValue)
            // Looked up before the dimensions are built: a hit is counted without allocating.
            let known = cacheResults.withLock { $0[cacheKey] }
            (known
                ?? counter(
                    in: cacheResults, cacheKey, "courier_cache_results",
                    [("endpoint", key.endpoint), ("transport", key.transport), ("result", result.rawValue)]))
                .increment()
        }
    }

    private func counter(in table: Locked<[Key: Counter]>, _ key: Key, _ label: String, _ dimensions: [(String, String)]) -> Counter {
        table.withLock { table in
            if let known = table[key] { return known }
            let made =
                factory.map { Counter(label: label, dimensions: dimensions, factory: $0) } ?? Counter(label: label, dimensions: dimensions)
            table[key] = made
            return made
        }
    }

    private func makeTimer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        factory.map { CoreMetrics.Timer(label: label, dimensions: dimensions, factory: $0) }
            ?? CoreMetrics.Timer(label: label, dimensions: dimensions)
    }
}
