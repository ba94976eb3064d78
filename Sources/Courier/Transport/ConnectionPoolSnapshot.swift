/// What a transport's connection pool holds, for health endpoints and metrics (see
/// ``Transport/connectionPool`` and ``NetworkClient/poolStatus``).
///
/// The curl transport counts its connections exactly, from libcurl's socket callbacks, per remote
/// address (`127.0.0.1:8080`, `[::1]:443`). AsyncHTTPClient and URLSession do not expose their
/// pools, so their transports report none.
public struct ConnectionPoolSnapshot: Sendable, Hashable {
    /// The connections to one remote address.
    public struct Address: Sendable, Hashable {
        /// Open now.
        public var open = 0
        /// Opened since the transport started.
        public var opened = 0

        /// No connections.
        public init() {}
    }

    /// The transport's name.
    public var transport: String
    /// By remote address (`ip:port`, IPv6 in brackets). Addresses with no open connection may be
    /// left out once many were seen.
    public var addresses: [String: Address] = [:]
    /// Transfers that went out on a connection opened for them.
    public var transfersOnNewConnections = 0
    /// Transfers that reused an open connection (or joined one, over HTTP/2).
    public var transfersOnReusedConnections = 0

    /// Connections open now, to every address.
    public var openConnections: Int { addresses.values.reduce(0) { $0 + $1.open } }

    /// An empty snapshot.
    /// - Parameter transport: The transport's name.
    public init(transport: String) {
        self.transport = transport
    }
}
