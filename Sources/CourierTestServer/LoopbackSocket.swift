import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to 127.0.0.1 on a port the kernel picked, not yet listening: what
/// ``FullBacklogListener`` and ``RefusingPort`` start from.
struct LoopbackSocket {
    /// The socket; the caller closes it.
    let descriptor: Int32
    /// Its address, port included.
    let address: sockaddr_in

    /// The port.
    var port: Int { Int(UInt16(bigEndian: address.sin_port)) }

    /// Makes and binds the socket.
    /// - Throws: `POSIXError` when no socket can be made, bound or named (nothing is left open).
    static func bind() throws -> LoopbackSocket {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            _ = Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return LoopbackSocket(descriptor: descriptor, address: address)
    }
}
