import Courier
import Foundation
import Testing

@Suite("Keyed loader (reconcile)")
struct KeyedLoaderTests {
    struct Item: Endpoint {
        typealias Output = PathReply
        var id: Int
        var path: String { "items/\(id)" }
    }

    final class Results: Sendable {
        let seen = Locked<[Int: [Result<PathReply, NetworkError>]]>([:])
        func add(_ key: Int, _ result: Result<PathReply, NetworkError>) { seen.withLock { $0[key, default: []].append(result) } }
        func count(_ key: Int) -> Int { seen.withLock { $0[key]?.count ?? 0 } }
    }

    func makeLoader(_ transport: CountingTransport, results: Results, queue: RequestQueue? = nil) throws -> KeyedLoader<Int, PathReply> {
        let client = try makeQueueClient(transport, queue: nil)
        return try KeyedLoader(client: client, queue: queue, endpoint: { Item(id: $0) }, onResult: results.add)
    }

    @Test("start new keys, cancel keys no longer wanted, keep running ones")
    func reconcile() async throws {
        let transport = CountingTransport(delay: .zero, holds: true)
        let results = Results()
        let loader = try makeLoader(transport, results: results)
        loader.setWanted([1, 2, 3])
        #expect(await waitUntil { transport.snapshot.running == 3 })
        loader.setWanted([2, 3, 4])
        #expect(await waitUntil { transport.snapshot.cancelled == 1 && transport.snapshot.started.count == 4 })
        #expect(loader.loading == [2, 3, 4])
        transport.release()
        #expect(await waitUntil { loader.loading.isEmpty })
        #expect(await waitUntil { results.count(2) == 1 && results.count(3) == 1 && results.count(4) == 1 })
        #expect(results.count(1) == 0, "a load nobody wants is not reported")
        #expect(transport.snapshot.started.sorted() == ["/items/1", "/items/2", "/items/3", "/items/4"])
    }

    @Test("keys already loaded are served from the cache without a request")
    func cacheHits() async throws {
        let transport = CountingTransport(delay: .milliseconds(1))
        let results = Results()
        let loader = try makeLoader(transport, results: results)
        loader.setWanted([1, 2])
        #expect(await waitUntil { results.count(1) == 1 && results.count(2) == 1 })
        loader.setWanted([])
        loader.setWanted([1, 2, 3])
        #expect(await waitUntil { results.count(1) == 2 && results.count(2) == 2 && results.count(3) == 1 })
        #expect(transport.snapshot.started.sorted() == ["/items/1", "/items/2", "/items/3"])
        #expect(loader.value(for: 3) == PathReply(path: "/items/3"))
        loader.setWanted([1, 2, 3])
        try await Task.sleep(for: .milliseconds(20))
        #expect(results.count(1) == 2, "a key still wanted is not served again")
    }

    @Test("a load is cancelled only when no consumer wants its key")
    func consumers() async throws {
        let transport = CountingTransport(delay: .zero, holds: true)
        let results = Results()
        let loader = try makeLoader(transport, results: results)
        loader.setWanted([1, 2], by: "page")
        loader.setWanted([2], by: "sidebar")
        #expect(await waitUntil { transport.snapshot.running == 2 })
        loader.setWanted([], by: "page")
        #expect(await waitUntil { transport.snapshot.cancelled == 1 })
        #expect(loader.wanted == [2])
        transport.release()
        #expect(await waitUntil { results.count(2) == 1 })
        #expect(transport.snapshot.started.count == 2)
    }

    @Test("suspend holds new loads, resume starts them; a failed key loads again when still wanted")
    func suspendAndRetry() async throws {
        let failing = Locked(true)
        let transport = CountingTransport(delay: .milliseconds(1)) { path in path == "/items/9" && failing.withLock { $0 } }
        let results = Results()
        let loader = try makeLoader(transport, results: results)
        loader.suspend()
        loader.setWanted([9])
        try await Task.sleep(for: .milliseconds(20))
        #expect(transport.snapshot.started.isEmpty)
        loader.resume()
        #expect(await waitUntil { results.count(9) == 1 })
        #expect(loader.value(for: 9) == nil)
        failing.withLock { $0 = false }
        loader.setWanted([9])
        #expect(await waitUntil { results.count(9) == 2 })
        #expect(loader.value(for: 9) == PathReply(path: "/items/9"))
    }

    @Test("a cache capacity out of range is a configuration error")
    func badCapacity() throws {
        let client = try makeQueueClient(CountingTransport(), queue: nil)
        #expect(throws: ConfigurationError.self) {
            try KeyedLoader<Int, PathReply>(client: client, cacheCapacity: -1, endpoint: { Item(id: $0) }, onResult: { _, _ in })
        }
    }
}
