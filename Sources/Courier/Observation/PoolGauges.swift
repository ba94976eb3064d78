import CoreMetrics

/// Records a client's pool (``PoolStatus``) as swift-metrics gauges, for
/// ``NetworkClient/recordPoolMetrics(factory:)``:
///
/// - `courier_queue_running` and `courier_queue_waiting` (dimensions `queue`, `host`): the default
///   queue's calls holding a slot and waiting for one;
/// - `courier_pool_connections_open` (dimensions `transport`, `address`): connections open now;
/// - `courier_pool_connections_opened` (dimensions `transport`, `address`): connections opened since
///   the transport started (a running total);
/// - `courier_pool_transfers` (dimensions `transport`, `connection`: `new` or `reused`): transfers by
///   whether they reused a connection (a running total).
///
/// Hosts and addresses are the ones the client really used, so the label set stays bounded by the
/// services it calls. A host or address seen before and gone now is recorded as 0.
final class PoolGauges: Sendable {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String]
    }

    private let seen = Locked<Set<Key>>([])

    func record(_ status: PoolStatus, queueName: String?, factory: (any MetricsFactory)?) {
        var values: [Key: Int] = [:]
        if let queue = status.queue {
            let name = queueName ?? "default"
            for (host, count) in queue.runningByHost { values[Key(label: "courier_queue_running", dimensions: [name, host])] = count }
            for (host, count) in queue.waitingByHost { values[Key(label: "courier_queue_waiting", dimensions: [name, host])] = count }
        }
        if let pool = status.connections {
            for (address, counts) in pool.addresses {
                values[Key(label: "courier_pool_connections_open", dimensions: [pool.transport, address])] = counts.open
                values[Key(label: "courier_pool_connections_opened", dimensions: [pool.transport, address])] = counts.opened
            }
            values[Key(label: "courier_pool_transfers", dimensions: [pool.transport, "new"])] = pool.transfersOnNewConnections
            values[Key(label: "courier_pool_transfers", dimensions: [pool.transport, "reused"])] = pool.transfersOnReusedConnections
        }
        let gone = seen.withLock { seen in
            let gone = seen.subtracting(values.keys)
            seen.formUnion(values.keys)
            return gone
        }
        for key in gone where values[key] == nil { values[key] = 0 }
        for (key, value) in values {
            let names =
                switch key.label {
                case "courier_queue_running", "courier_queue_waiting": ["queue", "host"]
                case "courier_pool_transfers": ["transport", "connection"]
                default: ["transport", "address"]
                }
            let dimensions = Array(zip(names, key.dimensions))
            let gauge =
                factory.map { Gauge(label: key.label, dimensions: dimensions, factory: $0) }
                ?? Gauge(label: key.label, dimensions: dimensions)
            gauge.record(value)
        }
    }
}
