import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("In-flight de-duplication")
struct DeduplicationTests {
    func setUp(delay: Duration = .zero, holds: Bool = true, setsCookie: Bool = false) throws -> (
        CountingTransport, RequestQueue, NetworkClient
    ) {
        let transport = CountingTransport(delay: delay, holds: holds, setsCookie: setsCookie)
        let queue = try RequestQueue(limits: .init(maxConcurrent: 8))
        return (transport, queue, try makeQueueClient(transport, queue: queue))
    }

    /// Three identical GETs of `/same`, all in the queue's shared transfer before it answers.
    static func threeSharing(
        _ transport: CountingTransport, _ queue: RequestQueue, _ client: NetworkClient
    ) async throws -> [DecodedResponse<PathReply>] {
        try await withThrowingTaskGroup(of: DecodedResponse<PathReply>.self) { group in
            for _ in 0..<3 {
                group.addTask { try await client.response(for: QueuedCall(path: "same")) }
            }
            #expect(await waitUntil { queue.status.sharingCallers == 3 })
            transport.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("identical GETs in flight share one transfer and every caller gets the result")
    func shared() async throws {
        let (transport, queue, client) = try setUp()
        let responses = try await Self.threeSharing(transport, queue, client)
        #expect(transport.snapshot.started == ["/same"])
        #expect(responses.map(\.value) == Array(repeating: PathReply(path: "/same"), count: 3))
        #expect(responses.filter(\.metrics.deduplicated).count == 2)
        #expect(queue.status.sharedTransfers == 0)
        _ = try await client.send(QueuedCall(path: "same"))
        #expect(transport.snapshot.started == ["/same", "/same"], "a finished transfer is not shared with later calls")
    }

    @Test("one caller cancelling cancels only that caller", arguments: [0, 1, 2])
    func oneCancels(which: Int) async throws {
        let (transport, queue, client) = try setUp()
        var tasks: [Task<PathReply, any Error>] = []
        for _ in 0..<3 {
            tasks.append(Task { try await client.send(QueuedCall(path: "same")) })
        }
        #expect(await waitUntil { queue.status.sharingCallers == 3 })
        tasks[which].cancel()
        #expect(await waitUntil { queue.status.sharingCallers == 2 })
        transport.release()
        for (index, task) in tasks.enumerated() {
            if index == which {
                _ = await expectNetworkError(.cancelled) { try await task.value }
            } else {
                #expect(try await task.value == PathReply(path: "/same"))
            }
        }
        #expect(transport.snapshot.started.count == 1)
        #expect(transport.snapshot.cancelled == 0)
    }

    @Test("the transfer is cancelled when the last caller cancels")
    func allCancel() async throws {
        let (transport, queue, client) = try setUp()
        var tasks: [Task<PathReply, any Error>] = []
        for _ in 0..<3 {
            tasks.append(Task { try await client.send(QueuedCall(path: "same")) })
        }
        #expect(await waitUntil { transport.snapshot.running == 1 && queue.status.sharingCallers == 3 })
        for task in tasks.dropLast() { task.cancel() }
        #expect(await waitUntil { queue.status.sharingCallers == 1 })
        #expect(transport.snapshot.cancelled == 0, "one caller is still there")
        tasks.last?.cancel()
        for task in tasks { _ = await expectNetworkError(.cancelled) { try await task.value } }
        #expect(await waitUntil { transport.snapshot.cancelled == 1 && transport.snapshot.running == 0 })
        #expect(queue.status.sharedTransfers == 0 && queue.status.running == 0)
    }

    @Test(
        "what may share",
        arguments: [
            ("GET twice", QueuedCall(path: "x"), QueuedCall(path: "x"), 1),
            ("HEAD twice", QueuedCall(path: "x", method: .head), QueuedCall(path: "x", method: .head), 1),
            ("POST twice", QueuedCall(path: "x", method: .post), QueuedCall(path: "x", method: .post), 2),
            (
                "POST with the caller's key", QueuedCall(path: "x", method: .post, deduplication: .key("k")),
                QueuedCall(path: "x", method: .post, deduplication: .key("k")), 1
            ),
            ("different paths", QueuedCall(path: "x"), QueuedCall(path: "y"), 2),
            (
                "different Authorization", QueuedCall(path: "x", headers: ["Authorization": "a"]),
                QueuedCall(path: "x", headers: ["Authorization": "b"]), 2
            ),
            (
                "different X-Api-Key", QueuedCall(path: "x", headers: ["X-Api-Key": "alice"]),
                QueuedCall(path: "x", headers: ["X-Api-Key": "bob"]), 2
            ),
            ("different Cookie", QueuedCall(path: "x", headers: ["Cookie": "s=1"]), QueuedCall(path: "x", headers: ["Cookie": "s=2"]), 2),
            (
                "different X-Api-Key under the caller's key",
                QueuedCall(path: "x", headers: ["X-Api-Key": "alice"], deduplication: .key("k")),
                QueuedCall(path: "x", headers: ["X-Api-Key": "bob"], deduplication: .key("k")), 2
            ),
            (
                "the same X-Api-Key", QueuedCall(path: "x", headers: ["X-Api-Key": "a"]),
                QueuedCall(path: "x", headers: ["X-Api-Key": "a"]), 1
            ),
            (
                "a header that does not vary", QueuedCall(path: "x", headers: ["X-Trace": "1"]),
                QueuedCall(path: "x", headers: ["X-Trace": "2"]), 1
            ),
            ("opted out", QueuedCall(path: "x", deduplication: .never), QueuedCall(path: "x", deduplication: .never), 2),
            (
                "different X-Tenant-Id", QueuedCall(path: "x", headers: ["X-Tenant-Id": "acme"]),
                QueuedCall(path: "x", headers: ["X-Tenant-Id": "globex"]), 2
            ),
            (
                "different x-account-id under the caller's key",
                QueuedCall(path: "x", headers: ["x-account-id": "1"], deduplication: .key("k")),
                QueuedCall(path: "x", headers: ["x-account-id": "2"], deduplication: .key("k")), 2
            ),
            (
                "one with an X-Tenant-Id, one without", QueuedCall(path: "x", headers: ["X-Tenant-Id": "acme"]),
                QueuedCall(path: "x"), 2
            ),
            (
                "the same X-Tenant-Id", QueuedCall(path: "x", headers: ["X-Tenant-Id": "acme"]),
                QueuedCall(path: "x", headers: ["X-Tenant-Id": "acme"]), 1
            ),
        ])
    func rules(name: String, first: QueuedCall, second: QueuedCall, transfers: Int) async throws {
        let (transport, queue, client) = try setUp()
        async let one = client.send(first)
        #expect(await waitUntil { transport.snapshot.started.count == 1 })
        async let two = client.send(second)
        // Both callers are in: either sharing the first transfer or running their own.
        #expect(await waitUntil { queue.status.sharingCallers == 2 || transport.snapshot.started.count == 2 })
        transport.release()
        _ = try await (one, two)
        #expect(transport.snapshot.started.count == transfers, "\(name)")
    }

    @Test("a caller that joined another's transfer never receives its Set-Cookie; the first caller does")
    func joinersGetNoCookies() async throws {
        let (transport, queue, client) = try setUp(setsCookie: true)
        let responses = try await Self.threeSharing(transport, queue, client)
        #expect(transport.snapshot.started.count == 1)
        let lead = responses.filter { !$0.metrics.deduplicated }
        let joined = responses.filter(\.metrics.deduplicated)
        #expect(lead.count == 1 && joined.count == 2)
        #expect(lead.first?.head.headerFields[.setCookie] == "session=1; Path=/")
        for response in joined {
            #expect(response.head.headerFields[.setCookie] == nil)
            #expect(response.head.headerFields[.contentType] == "application/json", "the rest of the head is shared")
            #expect(response.value == PathReply(path: "/same"))
        }
    }

    @Test("a queue's identity headers are its own: a name added in any case keys the transfer")
    func ownIdentityHeaders() async throws {
        var limits = RequestQueue.Limits(maxConcurrent: 8)
        limits.identityHeaderNames.insert("X-Workspace")
        #expect(limits.identityHeaderNames.contains("x-workspace"))
        let transport = CountingTransport(delay: .zero, holds: true)
        let queue = try RequestQueue(limits: limits)
        let client = try makeQueueClient(transport, queue: queue)
        async let one = client.send(QueuedCall(path: "x", headers: ["X-Workspace": "a"]))
        #expect(await waitUntil { transport.snapshot.started.count == 1 })
        async let two = client.send(QueuedCall(path: "x", headers: ["X-Workspace": "b"]))
        #expect(await waitUntil { transport.snapshot.started.count == 2 })
        transport.release()
        _ = try await (one, two)
        #expect(transport.snapshot.started.count == 2)
    }
}
