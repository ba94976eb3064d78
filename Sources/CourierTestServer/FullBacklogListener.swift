import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback listener that never accepts and whose accept queue is already full, so a new
/// connection hangs in the connect phase (Linux drops the SYN): a way to test connect timeouts and
/// cancelling while connecting without any address outside 127.0.0.1.
public final class FullBacklogListener: @unchecked Sendable {
    // @unchecked: the descriptors are written once in init and only closed in `close()`.
    /// The port that never answers (127.0.0.1).
    public let port: Int
    private var descriptors: [Int32] = []

    /// Binds and fills the listener.
    /// - Throws: `POSIXError` when no socket can be made or bound.
    public init() throws {
        let bound = try LoopbackSocket.bind()
        let listener = bound.descriptor
        guard listen(listener, 0) == 0 else {
            _ = Glibc.close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        descriptors.append(listener)
        var address = bound.address
        port = bound.port
        // Fill the accept queue (a backlog of 0 still admits one or two): non-blocking connects.
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { continue }
            descriptors.append(filler)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        usleep(50_000)
    }

    /// Closes every socket it made.
    public func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
        descriptors.removeAll()
    }
}
