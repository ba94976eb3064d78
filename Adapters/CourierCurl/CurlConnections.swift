import CCurl
import Courier
import Foundation
import Synchronization

/// The curl transport's connections, counted exactly: libcurl opens and closes every socket
/// through ``curlOpenSocketCallback`` and ``curlCloseSocketCallback``, which report here.
///
/// One per engine, alive as long as the engine (libcurl may close cached connections as late as
/// `curl_multi_cleanup`, which the engine runs before it goes).
final class CurlConnections: Sendable {
    /// The most addresses remembered without an open connection.
    static let maxIdleAddresses = 256

    private struct State {
        var snapshot: ConnectionPoolSnapshot
        var addressOf: [Int32: String] = [:]
    }

    private let state: Mutex<State>

    init(transport: String) {
        state = Mutex(State(snapshot: ConnectionPoolSnapshot(transport: transport)))
    }

    var snapshot: ConnectionPoolSnapshot { state.withLock { $0.snapshot } }

    func opened(_ descriptor: Int32, address: String) {
        state.withLock { state in
            state.addressOf[descriptor] = address
            state.snapshot.addresses[address, default: ConnectionPoolSnapshot.Address()].open += 1
            state.snapshot.addresses[address, default: ConnectionPoolSnapshot.Address()].opened += 1
        }
    }

    func closed(_ descriptor: Int32) {
        state.withLock { state in
            guard let address = state.addressOf.removeValue(forKey: descriptor) else { return }
            state.snapshot.addresses[address]?.open -= 1
            if state.snapshot.addresses[address]?.open == 0, state.snapshot.addresses.count > Self.maxIdleAddresses {
                state.snapshot.addresses[address] = nil
            }
        }
    }

    /// Counts a finished transfer by whether it reused a connection.
    func transferFinished(reused: Bool) {
        state.withLock { state in
            if reused {
                state.snapshot.transfersOnReusedConnections += 1
            } else {
                state.snapshot.transfersOnNewConnections += 1
            }
        }
    }
}

/// `CURLOPT_OPENSOCKETFUNCTION`: opens the socket (close-on-exec) and counts it for its address.
let curlOpenSocketCallback: curl_opensocket_callback = { user, purpose, address in
    guard let address else { return -1 }
    let descriptor = ccurl_open_socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    guard descriptor >= 0, purpose == CURLSOCKTYPE_IPCXN, let user else { return descriptor }
    var text = [CChar](repeating: 0, count: 64)
    let formatted = ccurl_format_address(address, &text, text.count) == 0
    let name = formatted ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
    Unmanaged<CurlConnections>.fromOpaque(user).takeUnretainedValue().opened(descriptor, address: name)
    return descriptor
}

/// `CURLOPT_CLOSESOCKETFUNCTION`: closes the socket and counts it.
let curlCloseSocketCallback: curl_closesocket_callback = { user, descriptor in
    if let user { Unmanaged<CurlConnections>.fromOpaque(user).takeUnretainedValue().closed(descriptor) }
    return close(descriptor)
}
