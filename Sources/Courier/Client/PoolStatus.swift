import CoreMetrics

/// A client's pool at one moment (see ``NetworkClient/poolStatus``).
public struct PoolStatus: Sendable, Hashable {
    /// The default queue's state, with its calls running and waiting per host; `nil` without a queue.
    public var queue: RequestQueue.Status?
    /// The transport's connections; `nil` when the transport does not expose them.
    public var connections: ConnectionPoolSnapshot?

    /// A status.
    /// - Parameters:
    ///   - queue: The queue's state.
    ///   - connections: The transport's connections.
    public init(queue: RequestQueue.Status?, connections: ConnectionPoolSnapshot?) {
        self.queue = queue
        self.connections = connections
    }
}

extension NetworkClient {
    /// Records ``poolStatus`` as swift-metrics gauges (`courier_queue_running`,
    /// `courier_queue_waiting`, `courier_pool_connections_open`, `courier_pool_connections_opened`,
    /// `courier_pool_transfers`; see the names and dimensions in the documentation of the pool).
    /// Call it from a periodic task or a metrics endpoint's handler: a pool has no event to push on.
    /// - Parameter factory: The metrics backend; `nil` (the default) uses the one bootstrapped in
    ///   `MetricsSystem`.
    public func recordPoolMetrics(factory: (any MetricsFactory)? = nil) {
        poolGauges.record(poolStatus, queueName: queue?.name, factory: factory)
    }

    /// The client's pool at this moment, for health endpoints and dashboards: its default queue's
    /// calls running and waiting per host (when it has a queue), and the transport's connections
    /// (when the transport can tell; see ``Transport/connectionPool``).
    public var poolStatus: PoolStatus {
        PoolStatus(queue: queue?.status, connections: transport.connectionPool)
    }
}
