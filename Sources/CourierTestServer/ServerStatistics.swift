import Synchronization

/// Counters a test server keeps, readable from any thread.
final class ServerStatistics: Sendable {
    struct Counts: Sendable {
        var connectionsOpened = 0
        var connectionsOpen = 0
        var requests = 0
    }

    private let counts = Mutex(Counts())

    func connectionOpened() {
        counts.withLock {
            $0.connectionsOpened += 1
            $0.connectionsOpen += 1
        }
    }
    func connectionClosed() { counts.withLock { $0.connectionsOpen -= 1 } }
    func requestReceived() { counts.withLock { $0.requests += 1 } }
    var snapshot: Counts { counts.withLock { $0 } }
}
