import NIOConcurrencyHelpers

/// Counters a test server keeps, readable from any thread.
final class ServerStatistics: Sendable {
    struct Counts: Sendable {
        var connectionsOpened = 0
        var connectionsOpen = 0
        var requests = 0
    }

    private let counts = NIOLockedValueBox(Counts())

    func connectionOpened() {
        counts.withLockedValue {
            $0.connectionsOpened += 1
            $0.connectionsOpen += 1
        }
    }
    func connectionClosed() { counts.withLockedValue { $0.connectionsOpen -= 1 } }
    func requestReceived() { counts.withLockedValue { $0.requests += 1 } }
    var snapshot: Counts { counts.withLockedValue { $0 } }
}
