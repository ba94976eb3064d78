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
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            _ = Glibc.close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        descriptor = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Releases the port.
    public func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
