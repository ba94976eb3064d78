import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A Unix domain socket in `/tmp` whose every connection is carried, byte for
/// byte, to a loopback server's TCP port: the test server behind a socket, as a local daemon is.
///
/// ```swift
/// let relay = try await UnixSocketRelay.start(to: server.port)
/// // a client with baseURL "http+unix://" + the percent-encoded relay.path
/// await relay.shutdown()
/// ```
public final class UnixSocketRelay: Sendable {
    /// The socket's path.
    public let path: String
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let counter: NIOLockedValueBox<Int>

    /// How many connections the socket accepted.
    public var accepted: Int { counter.withLockedValue { $0 } }

    private init(path: String, channel: any Channel, group: MultiThreadedEventLoopGroup, counter: NIOLockedValueBox<Int>) {
        self.path = path
        self.channel = channel
        self.group = group
        self.counter = counter
    }

    /// Listens on a fresh socket path and carries each connection to `port` on 127.0.0.1.
    /// - Parameter port: The loopback server's port.
    /// - Returns: The running relay; call ``shutdown()`` when done.
    /// - Throws: When the socket cannot be bound.
    public static func start(to port: Int) async throws -> UnixSocketRelay {
        // In /tmp, not TMPDIR: a socket path holds at most 107 bytes.
        let path = "/tmp/courier-\(UInt32.random(in: 0...UInt32.max)).sock"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counter = NIOLockedValueBox(0)
        do {
            let channel = try await ServerBootstrap(group: group)
                .childChannelInitializer { client in
                    counter.withLockedValue { $0 += 1 }
                    return client.eventLoop.makeCompletedFuture {
                        try client.pipeline.syncOperations.addHandler(SpliceHandler(port: port))
                    }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            return UnixSocketRelay(path: path, channel: channel, group: group, counter: counter)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening, closes every connection and removes the socket file.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// One connection: opens its twin to the server at once, holds what arrives until then, then
/// relays both ways (the server's side through ``RelayHandler``).
private final class SpliceHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let port: Int
    private var pending: [ByteBuffer] = []
    private var upstream: (any Channel)?
    private var closed = false

    init(port: Int) {
        self.port = port
    }

    func channelActive(context: ChannelHandlerContext) {
        let client = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { upstream in
                upstream.eventLoop.makeCompletedFuture { try upstream.pipeline.syncOperations.addHandler(RelayHandler(to: client)) }
            }
            .connect(host: "127.0.0.1", port: port)
            .whenComplete { result in handler.value.connected(result, client: client) }
    }

    private func connected(_ result: Result<any Channel, any Error>, client: any Channel) {
        guard case .success(let upstream) = result, !closed else {
            if case .success(let upstream) = result { upstream.close(promise: nil) }
            client.close(promise: nil)
            return
        }
        self.upstream = upstream
        for buffer in pending { upstream.write(buffer, promise: nil) }
        pending = []
        upstream.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if let upstream { upstream.writeAndFlush(buffer, promise: nil) } else { pending.append(buffer) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        upstream?.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
