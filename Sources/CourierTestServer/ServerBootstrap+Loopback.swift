import NIOCore
import NIOPosix

extension ServerBootstrap {
    /// Binds to 127.0.0.1 on a free port, the one place the test servers do it. On any failure the
    /// channel is closed and `group` is shut down before the error is thrown.
    /// - Parameter group: The event loop group the bootstrap runs on.
    /// - Returns: The listening channel and its port.
    /// - Throws: When the socket cannot be bound, or ``TestServerError/noPort``.
    func bindLoopback(shuttingDownOnFailure group: MultiThreadedEventLoopGroup) async throws -> (channel: any Channel, port: Int) {
        do {
            let channel = try await bind(host: "127.0.0.1", port: 0).get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                throw TestServerError.noPort
            }
            return (channel, port)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }
}
