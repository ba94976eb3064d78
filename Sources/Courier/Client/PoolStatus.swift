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
