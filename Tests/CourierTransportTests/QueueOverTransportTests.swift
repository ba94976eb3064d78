import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Queues, de-duplication and reconciling over real transports, checked against what the
/// loopback server saw.
@Suite("Queues over real transports")
struct QueueOverTransportTests {
    struct Slow: Endpoint {
        typealias Output = Data
        var baseURL: String?
        var milliseconds: Int
        var key: String
        var path: String { "delay/\(milliseconds)" }
        var query: [QueryItem] { [QueryItem("k", key)] }
    }

    /// Waits at the server's gate `gate` until the test releases it: calls stay in flight for as
    /// long as the test needs, however busy the machine is.
    struct Held: Endpoint {
        typealias Output = Data
        var gate: String
        var path: String { "hold/\(gate)" }
    }

    @Test("the server never sees more requests at once than the queue allows", arguments: ConformanceTransport.all)
    func limitOnServer(transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server) { $0.queue = RequestQueue.Limits(maxConcurrent: 3) }
            try await withThrowingTaskGroup(of: Data.self) { group in
                for index in 0..<18 {
                    group.addTask { try await client.send(Slow(milliseconds: 100, key: "\(index)")) }
                }
                for try await _ in group {}
            }
            #expect(server.requestCount == 18)
            #expect(server.maxRequestsInFlight <= 3)
            #expect(server.maxRequestsInFlight >= 2, "the calls did run side by side")
            await client.shutdown()
        }
    }

    @Test("per host: each server sees at most the per-host limit", arguments: ConformanceTransport.all)
    func perHostOnServer(transport: ConformanceTransport) async throws {
        try await withServer { first in
            try await withServer { second in
                let client = try transport.makeClient(first) { $0.queue = RequestQueue.Limits(maxConcurrent: 8, maxConcurrentPerHost: 2) }
                try await withThrowingTaskGroup(of: Data.self) { group in
                    for index in 0..<16 {
                        let base = index.isMultiple(of: 2) ? first.baseURL : second.baseURL
                        group.addTask { try await client.send(Slow(baseURL: base, milliseconds: 30, key: "\(index)")) }
                    }
                    for try await _ in group {}
                }
                #expect(first.requestCount == 8 && second.requestCount == 8)
                #expect(first.maxRequestsInFlight <= 2 && second.maxRequestsInFlight <= 2)
                await client.shutdown()
            }
        }
    }

    @Test("identical calls reach the server once; after the last caller cancels, nothing is left", arguments: ConformanceTransport.all)
    func dedupeOnServer(transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server) { $0.queue = RequestQueue.Limits() }
            let queue = try #require(client.queue)
            let results = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await client.send(Held(gate: "same")) }
                }
                #expect(await eventually { queue.status.sharingCallers == 4 }, "every caller joined before the answer came")
                server.release("same")
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
            #expect(results.count == 4 && Set(results).count == 1)
            #expect(server.requestCount == 1)

            server.resetCounts()
            let callers = (0..<3).map { _ in Task { try await client.send(Held(gate: "abandoned")) } }
            #expect(await eventually { server.requestsInFlight == 1 && queue.status.sharingCallers == 3 })
            for caller in callers { caller.cancel() }
            for caller in callers { _ = await expectNetworkError(.cancelled) { try await caller.value } }
            #expect(await eventually { server.requestsInFlight == 0 }, "the transfer was stopped")
            #expect(server.requestLog == ["/hold/abandoned"])
            await client.shutdown()
        }
    }

    @Test("reconcile: loads, cancellations and cache hits, checked against the server's request log", arguments: ConformanceTransport.all)
    func reconcileOnServer(transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            let delivered = Locked<[String: Int]>([:])
            let loader = try KeyedLoader<String, Data>(client: client, endpoint: { Held(gate: $0) }) { key, result in
                if (try? result.get()) != nil { delivered.withLock { $0[key, default: 0] += 1 } }
            }
            loader.setWanted(["a", "b", "c"])
            #expect(await eventually { server.requestsInFlight == 3 })
            loader.setWanted(["b", "c", "d"])
            #expect(await eventually { server.requestsInFlight == 3 && server.requestCount == 4 }, "a stopped, d started")
            for gate in ["a", "b", "c", "d"] { server.release(gate) }
            #expect(await eventually { delivered.withLock { $0 } == ["b": 1, "c": 1, "d": 1] })
            #expect(server.requestLog.sorted() == ["/hold/a", "/hold/b", "/hold/c", "/hold/d"])
            #expect(await eventually { server.requestsInFlight == 0 })
            loader.setWanted([])
            loader.setWanted(["b", "c", "d"])
            #expect(await eventually { delivered.withLock { $0 } == ["b": 2, "c": 2, "d": 2] })
            #expect(server.requestCount == 4, "cached keys were served without a request")
            await client.shutdown()
        }
    }
}
