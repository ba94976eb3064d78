import NIOConcurrencyHelpers

/// Counters a test server keeps, readable from any thread.
final class ServerStatistics: Sendable {
    struct Counts: Sendable {
        var connectionsOpened = 0
        var connectionsOpen = 0
        var requests = 0
        /// Requests received whose response has not been finished (or whose connection has not closed).
        var requestsInFlight = 0
        /// The most requests in flight at once since start (or the last reset).
        var maxRequestsInFlight = 0
        /// The targets (path and query) of the requests received, oldest first; at most
        /// ``ServerStatistics/maxLoggedRequests`` are kept.
        var requestLog: [String] = []
    }

    /// The most request targets the log keeps.
    static let maxLoggedRequests = 100_000

    private let counts = NIOLockedValueBox(Counts())

    func connectionOpened() {
        counts.withLockedValue {
            $0.connectionsOpened += 1
            $0.connectionsOpen += 1
        }
    }
    func connectionClosed() { counts.withLockedValue { $0.connectionsOpen -= 1 } }
    func requestStarted(target: String) {
        counts.withLockedValue {
            $0.requests += 1
            $0.requestsInFlight += 1
            $0.maxRequestsInFlight = max($0.maxRequestsInFlight, $0.requestsInFlight)
            if $0.requestLog.count < Self.maxLoggedRequests { $0.requestLog.append(target) }
        }
    }
    func requestEnded() { counts.withLockedValue { $0.requestsInFlight -= 1 } }
    func resetCounts() {
        counts.withLockedValue {
            $0.maxRequestsInFlight = $0.requestsInFlight
            $0.requestLog = []
        }
    }
    var snapshot: Counts { counts.withLockedValue { $0 } }
}
