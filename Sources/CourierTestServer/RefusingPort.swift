import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port that refuses every connection, held for as long as this value lives: a socket
/// bound to 127.0.0.1 that never listens. Unlike the port of a server that was just shut down, no
/// other server started meanwhile (by a test running beside this one) can take it.
public final class RefusingPort: @unchecked Sendable {
    // @unchecked: the descriptor is written once in init and only closed in `close()` and deinit.
    /// The port (127.0.0.1).
    public let port: Int
    private var descriptor: Int32

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Binds the port.
    /// - Throws: `POSIXError` when no socket can be made or bound.
    public init() throws {
        let bound = try LoopbackSocket.bind()
        descriptor = bound.descriptor
        port = bound.port
    }

    /// Releases the port.
    public func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
