import NIOCore
import NIOHTTP1
import NIOPosix

/// An in-process HTTP/1.1 server on 127.0.0.1 for tests, examples and benchmarks.
///
/// It binds port 0 (the kernel picks a free port) on the loopback address only, and serves:
///
/// | route | answer |
/// | --- | --- |
/// | `/echo`, `/echo/...` | ``EchoResponse`` as JSON: method, path, query, headers, body |
/// | `/status/{code}` | that status; `?body=` text and `?contentType=` optional |
/// | `/delay/{ms}` | 200 after `ms` milliseconds |
/// | `/bytes/{n}` | `n` bytes with a `Content-Length` |
/// | `/stream/{chunks}?size=&delayMs=` | a chunked body, one chunk every `delayMs` |
/// | `/redirect/{n}` | a 302 chain of `n` hops ending at `/echo` |
/// | `/redirect-to?url=&status=` | one redirect to `url` (302 by default) |
/// | `/headers?Name=value` | 200 with the given response headers |
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { await server.shutdown() } }
/// print(server.baseURL)   // http://127.0.0.1:PORT
/// ```
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let statistics: ServerStatistics

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Connections accepted since start.
    public var connectionsOpened: Int { statistics.snapshot.connectionsOpened }
    /// Connections open now.
    public var connectionsOpen: Int { statistics.snapshot.connectionsOpen }
    /// Requests received since start.
    public var requestCount: Int { statistics.snapshot.requests }

    private init(port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, statistics: ServerStatistics) {
        self.port = port
        self.channel = channel
        self.group = group
        self.statistics = statistics
    }

    /// Starts a server on 127.0.0.1 and a free port.
    /// - Parameter threads: Event-loop threads; one by default.
    /// - Returns: The running server.
    /// - Throws: When the socket cannot be bound.
    public static func start(threads: Int = 1) async throws -> TestServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let statistics = ServerStatistics()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 512)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    statistics.connectionOpened()
                    channel.closeFuture.whenComplete { _ in statistics.connectionClosed() }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(RouteHandler(statistics: statistics))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                try? await group.shutdownGracefully()
                throw TestServerError.noPort
            }
            return TestServer(port: port, channel: channel, group: group, statistics: statistics)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Closes the listening socket and every connection, and stops the event loops.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Why a test server could not start.
public enum TestServerError: Error, Sendable {
    /// The bound socket reported no port.
    case noPort
}
