import NIOCore
import NIOPosix

/// What the servers that write raw bytes (``FaultServer``, ``SoakServer``) share.
enum RawHTTP {
    /// The index just past the blank line that ends a request head in `bytes`, if it arrived.
    static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Closes `channel` with a reset (RST) instead of a FIN: SO_LINGER with a zero timeout.
    static func reset(_ channel: any Channel) {
        guard let socket = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}
