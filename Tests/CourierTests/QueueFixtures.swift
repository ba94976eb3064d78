import Courier
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// A transport for queue tests: it counts the requests running at once (in total and per host),
/// records the order they started in, and answers each after `delay` (or fails it when `fails`
/// says so). With `holds`, each request also waits until ``release()`` (at most 120 s), so tests
/// do not depend on timing. A cancelled request is counted in `cancelled`.
final class CountingTransport: Transport {
    struct Counts {
        var running = 0
        var maxRunning = 0
        var runningByHost: [String: Int] = [:]
        var maxRunningByHost: [String: Int] = [:]
        var started: [String] = []
        var cancelled = 0
    }

    let counts = Locked(Counts())
    let delay: Duration
    let fails: @Sendable (String) -> Bool
    let released: Locked<Bool>
    /// Whether each answer sets a cookie (`session=` and the transfer's number).
    let setsCookie: Bool

    init(
        delay: Duration = .milliseconds(5), holds: Bool = false, setsCookie: Bool = false,
        fails: @escaping @Sendable (String) -> Bool = { _ in false }
    ) {
        self.delay = delay
        self.fails = fails
        self.setsCookie = setsCookie
        released = Locked(!holds)
    }

    /// Lets held requests (and every later one) answer.
    func release() { released.withLock { $0 = true } }

    var name: String { "counting" }

    var snapshot: Counts { counts.withLock { $0 } }

    func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        let host = request.authority ?? ""
        let path = request.path ?? ""
        counts.withLock {
            $0.running += 1
            $0.maxRunning = max($0.maxRunning, $0.running)
            $0.runningByHost[host, default: 0] += 1
            $0.maxRunningByHost[host] = max($0.maxRunningByHost[host] ?? 0, $0.runningByHost[host] ?? 0)
            $0.started.append(path)
        }
        defer {
            counts.withLock {
                $0.running -= 1
                $0.runningByHost[host, default: 0] -= 1
            }
        }
        do {
            let end = ContinuousClock.now.advanced(by: .seconds(120))
            // A request that is to fail does not wait: tests use it to fail one call at once.
            while !fails(path), !released.withLock({ $0 }), ContinuousClock.now < end {
                try await Task.sleep(for: .milliseconds(1))
            }
            try await Task.sleep(for: delay)
        } catch {
            counts.withLock { $0.cancelled += 1 }
            throw NetworkError.cancelled(phase: .awaitingResponse)
        }
        if fails(path) {
            throw NetworkError(kind: .connectionClosed, phase: .receiving, message: "injected failure")
        }
        let text = "{\"path\":\"\(path)\"}"
        var fields: HTTPFields = [.contentType: "application/json"]
        if setsCookie { fields[.setCookie] = "session=\(counts.withLock { $0.started.count }); Path=/" }
        return TransportResponse(head: HTTPResponse(status: .ok, headerFields: fields), body: ResponseBody(data: Data(text.utf8)))
    }

    func shutdown() async {}
}

struct PathReply: Codable, Sendable, Hashable {
    var path: String
}

/// A GET of any path, with queue settings.
struct QueuedCall: Endpoint {
    typealias Output = PathReply
    var baseURL: String? = nil
    var path: String
    var method: HTTPRequest.Method = .get
    var headers: RequestHeaders = [:]
    var priority: RequestPriority = .normal
    var tags: Set<String> = []
    var team: String? = nil
    var deduplication: Deduplication = .automatic
    var requestQueue: RequestQueue? = nil
    var timeout: Duration? = nil
}

/// The same as an API object, for batches.
final class QueuedAPI: BaseAPI<PathReply>, @unchecked Sendable {
    let name: String
    let apiTags: Set<String>
    init(client: NetworkClient, path: String, tags: Set<String> = []) {
        self.name = path
        self.apiTags = tags
        super.init(client: client)
    }
    override var path: String { name }
    override var tags: Set<String> { apiTags }
}

func makeQueueClient(
    _ transport: any Transport, queue: RequestQueue?, timeout: Duration = .seconds(30), timeSource: any TimeSource = SystemTimeSource()
) throws -> NetworkClient {
    var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "counting")
    configuration.requestTimeout = timeout
    configuration.timeSource = timeSource
    return try NetworkClient(configuration: configuration, transport: transport, queue: queue)
}

/// Waits (bounded) until `condition` holds. The bound only catches a hang (see `eventually`).
func waitUntil(_ limit: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async -> Bool {
    let end = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
