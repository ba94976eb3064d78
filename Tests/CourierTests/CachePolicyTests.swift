import Courier
import CourierCache
import CourierMock
import Foundation
import MetricsTestKit
import Testing

/// What each cache policy does, and the cache's safety rules, over the mock transport on a manual
/// clock. (The same cache over the real transports: CacheOverTransportTests.)
@Suite("Response cache policies and safety")
struct CachePolicyTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path = "item"
        var method: HTTPRequest.Method = .get
        var headers: RequestHeaders = [:]
        var cachePolicy: CachePolicy?
        var statusValidation: StatusValidation { .any }
    }

    struct Setup {
        let mock = MockTransport()
        let clock = ManualTimeSource()
        let client: NetworkClient

        init(cache: ResponseCache = .memory(), policy: CachePolicy = .useProtocol, observers: [any CallObserver] = []) throws {
            var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
            configuration.cache = cache
            configuration.cachePolicy = policy
            configuration.timeSource = clock
            configuration.exportsMetrics = false
            client = try NetworkClient(configuration: configuration, transport: mock, observers: observers)
        }

        var sent: Int { mock.recordedRequests.count }
    }

    static let cacheable: RequestHeaders = ["Cache-Control": "max-age=60", "ETag": "\"1\""]

    @Test("reloadIgnoringCache always loads and still stores; returnCacheElseLoad serves any stored response")
    func reloadAndReturn() async throws {
        let setup = try Setup()
        setup.mock.stub(.get, "/item", .status(200, headers: Self.cacheable, body: Data("one".utf8)))
        _ = try await setup.client.response(for: Call())
        var reload = Call()
        reload.cachePolicy = .reloadIgnoringCache
        #expect(try await setup.client.response(for: reload).metrics.cache == .miss)
        #expect(setup.sent == 2)
        setup.clock.advance(by: .seconds(3600))
        var anyStored = Call()
        anyStored.cachePolicy = .returnCacheElseLoad
        let stale = try await setup.client.response(for: anyStored)
        #expect(stale.metrics.cache == .stale)
        #expect(stale.value == Data("one".utf8))
        #expect(setup.sent == 2)
    }

    @Test("revalidateAlways asks every time, with the stored validator")
    func revalidateAlways() async throws {
        let setup = try Setup(policy: .revalidateAlways)
        setup.mock.stub(.get, "/item", headers: ["If-None-Match": "\"1\""], .status(304, headers: Self.cacheable))
        setup.mock.stub(.get, "/item", .status(200, headers: Self.cacheable, body: Data("one".utf8)))
        #expect(try await setup.client.response(for: Call()).metrics.cache == .miss)
        let second = try await setup.client.response(for: Call())
        #expect(second.metrics.cache == .revalidated)
        #expect(second.value == Data("one".utf8))
        #expect(setup.mock.recordedRequests.last?.head.headerFields[.ifNoneMatch] == "\"1\"")
    }

    @Test("a request's own no-cache revalidates; its own conditional headers pass the cache untouched")
    func requestDirectives() async throws {
        let setup = try Setup()
        setup.mock.stub(.get, "/item", headers: ["If-None-Match": "\"1\""], .status(304, headers: Self.cacheable))
        setup.mock.stub(.get, "/item", .status(200, headers: Self.cacheable, body: Data("one".utf8)))
        _ = try await setup.client.response(for: Call())
        var noCache = Call()
        noCache.headers = ["Cache-Control": "no-cache"]
        #expect(try await setup.client.response(for: noCache).metrics.cache == .revalidated)
        var own = Call()
        own.headers = ["If-None-Match": "\"1\""]
        let passed = try await setup.client.response(for: own)
        #expect(passed.head.status.code == 304, "the caller's conditional request gets the server's answer")
        #expect(passed.metrics.cache == nil)
        #expect(setup.sent == 3)
    }

    @Test("credentials: stored only when the response allows it, and never served to other credentials")
    func credentials() async throws {
        let setup = try Setup()
        setup.mock.stub(.get, "/item", headers: ["Authorization": "Bearer shared"], .status(200, headers: Self.cacheable))
        setup.mock.stub(
            .get, "/item", .status(200, headers: ["Cache-Control": "public, max-age=60"], body: Data("public".utf8)))
        var alice = Call()
        alice.headers = ["Authorization": "Bearer shared"]
        _ = try await setup.client.response(for: alice)
        #expect(try await setup.client.response(for: alice).metrics.cache == .miss, "private to credentials: not stored")

        var bob = Call()
        bob.headers = ["Authorization": "Bearer bob"]
        var carol = Call()
        carol.headers = ["Authorization": "Bearer carol"]
        _ = try await setup.client.response(for: bob)
        #expect(try await setup.client.response(for: bob).metrics.cache == .hit, "public: stored for bob")
        #expect(try await setup.client.response(for: carol).metrics.cache == .miss, "never served to other credentials")
        #expect(try await setup.client.response(for: Call()).metrics.cache == .miss, "nor to no credentials")
    }

    @Test("a body larger than maxEntryBytes is passed on and not stored; HEAD is stored apart from GET")
    func sizesAndHead() async throws {
        let setup = try Setup(cache: ResponseCache(store: MemoryCacheStore(), maxEntryBytes: 10))
        setup.mock.stub(.get, "/item", .status(200, headers: Self.cacheable, body: Data(repeating: 1, count: 11)))
        setup.mock.stub(.head, "/item", .status(200, headers: Self.cacheable))
        #expect(try await setup.client.response(for: Call()).value.count == 11)
        #expect(try await setup.client.response(for: Call()).metrics.cache == .miss)
        var head = Call()
        head.method = .head
        #expect(try await setup.client.response(for: head).metrics.cache == .miss)
        let second = try await setup.client.response(for: head)
        #expect(second.metrics.cache == .hit)
        #expect(second.value.isEmpty)
    }

    @Test("the metrics export counts cache results per endpoint")
    func metricsCount() async throws {
        let metrics = TestMetrics()
        let setup = try Setup(observers: [MetricsExport(factory: metrics)])
        setup.mock.stub(.get, "/item", .status(200, headers: Self.cacheable, body: Data("one".utf8)))
        for _ in 0..<3 { _ = try await setup.client.response(for: Call()) }
        let hits = try metrics.expectCounter(
            "courier_cache_results", [("endpoint", "CachePolicyTests.Call"), ("transport", "mock"), ("result", "hit")])
        #expect(hits.totalValue == 2)
        let misses = try metrics.expectCounter(
            "courier_cache_results", [("endpoint", "CachePolicyTests.Call"), ("transport", "mock"), ("result", "miss")])
        #expect(misses.totalValue == 1)
    }

    @Test("cacheOnly without a cache fails as not_cached; other policies without one just load")
    func noCache() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/item", .status(200, headers: Self.cacheable))
        let client = try NetworkClient(configuration: ClientConfiguration(baseURL: "https://api.test", transport: "mock"), transport: mock)
        var offline = Call()
        offline.cachePolicy = .cacheOnly
        let error = await #expect(throws: NetworkError.self) { try await client.response(for: offline) }
        #expect(error?.kind == .notCached)
        #expect(error?.kind.description == "not_cached")
        let loaded = try await client.response(for: Call())
        #expect(loaded.metrics.cache == nil)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("cacheOnly never reaches the network, whatever the method: with a cache, an unsafe method fails as not_cached too")
    func cacheOnlySendsNothing() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/item", .status(201))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.cache = .memory()
        let client = try NetworkClient(configuration: configuration, transport: mock)
        var offline = Call(method: .post)
        offline.cachePolicy = .cacheOnly
        let error = await #expect(throws: NetworkError.self) { try await client.response(for: offline) }
        #expect(error?.kind == .notCached)
        #expect(error?.message.contains("nothing was sent") == true)
        #expect(mock.recordedRequests.isEmpty)
    }
}
