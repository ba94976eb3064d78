import Courier
import CourierCache
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// The response cache over every transport, against the loopback server's `/cacheable` entities.
/// Time is a `ManualTimeSource`: a response ages when the test advances it.
@Suite("Response cache over real transports")
struct CacheOverTransportTests {
    /// A GET of one `/cacheable` entity.
    struct Entity: Endpoint {
        typealias Output = String
        var name: String
        var query: [QueryItem] = []
        var headers: RequestHeaders = [:]
        var method: HTTPRequest.Method = .get
        var cachePolicy: CachePolicy?
        var path: String { "cacheable/\(name)" }
    }

    /// A client on `transport` for `server` with a memory cache and a manual clock.
    func client(
        _ transport: ConformanceTransport, _ server: TestServer, clock: ManualTimeSource, cache: ResponseCache = .memory(),
        policy: CachePolicy = .useProtocol
    ) throws -> NetworkClient {
        try transport.makeClient(server) { configuration in
            configuration.cache = cache
            configuration.cachePolicy = policy
            configuration.timeSource = clock
        }
    }

    /// Requests the server saw for an entity.
    func requests(_ server: TestServer, _ name: String) -> Int {
        server.requestLog.filter { $0.hasPrefix("/cacheable/\(name)") }.count
    }

    @Test(
        "fresh: served with no request; stale: revalidated with one conditional request; changed: replaced",
        arguments: ConformanceTransport.all)
    func freshStaleChanged(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            let entity = Entity(name: "profile", query: [QueryItem("cc", "max-age=60")])

            let first = try await client.response(for: entity)
            #expect(first.value == "profile v1")
            #expect(first.metrics.cache == .miss)
            let second = try await client.response(for: entity)
            #expect(second.value == "profile v1")
            #expect(second.metrics.cache == .hit)
            #expect(second.metrics.attempts == 0)
            #expect(requests(server, "profile") == 1, "a fresh hit sends nothing")

            clock.advance(by: .seconds(61))
            let third = try await client.response(for: entity)
            #expect(third.value == "profile v1")
            #expect(third.metrics.cache == .revalidated)
            #expect(requests(server, "profile") == 2)
            let fourth = try await client.response(for: entity)
            #expect(fourth.metrics.cache == .hit, "the 304 made it fresh again")

            clock.advance(by: .seconds(61))
            var changed = entity
            changed.headers = ["X-Version": "2"]
            let fifth = try await client.response(for: changed)
            #expect(fifth.value == "profile v2")
            #expect(fifth.metrics.cache == .miss)
            let sixth = try await client.response(for: entity)
            #expect(sixth.value == "profile v2", "the changed entity replaced the stored one")
            #expect(sixth.metrics.cache == .hit)
            #expect(requests(server, "profile") == 3)
            await client.shutdown()
        }
    }

    @Test("no-store is never stored; Vary separates entries; an unsafe method invalidates", arguments: ConformanceTransport.all)
    func storingRules(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)

            let secret = Entity(name: "secret", query: [QueryItem("cc", "no-store")])
            _ = try await client.response(for: secret)
            let again = try await client.response(for: secret)
            #expect(again.metrics.cache == .miss)
            #expect(requests(server, "secret") == 2)

            let english = Entity(
                name: "greeting", query: [QueryItem("cc", "max-age=60"), QueryItem("vary", "Accept-Language")],
                headers: ["Accept-Language": "en"])
            var german = english
            german.headers = ["Accept-Language": "de"]
            #expect(try await client.response(for: english).value == "greeting v1 for en")
            #expect(try await client.response(for: english).metrics.cache == .hit)
            let other = try await client.response(for: german)
            #expect(other.value == "greeting v1 for de", "another Accept-Language is not served the stored one")
            #expect(other.metrics.cache == .miss)

            let list = Entity(name: "list", query: [QueryItem("cc", "max-age=60")])
            _ = try await client.response(for: list)
            #expect(try await client.response(for: list).metrics.cache == .hit)
            var post = list
            post.method = .post
            _ = try await client.response(for: post)
            #expect(try await client.response(for: list).metrics.cache == .miss, "a successful POST removed the stored GET")
            await client.shutdown()
        }
    }

    @Test("staleIfError serves a stale response while the server fails; without it the failure stands", arguments: ConformanceTransport.all)
    func staleIfError(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock, policy: .staleIfError(maxStale: .seconds(300)))
            let entity = Entity(name: "catalogue", query: [QueryItem("cc", "max-age=10")])
            _ = try await client.response(for: entity)
            clock.advance(by: .seconds(60))

            var failing = entity
            failing.headers = ["X-Status": "503"]
            let stale = try await client.response(for: failing)
            #expect(stale.value == "catalogue v1")
            #expect(stale.metrics.cache == .stale)
            #expect(stale.metrics.cacheAge == .seconds(60))

            failing.cachePolicy = .useProtocol
            await #expect(throws: NetworkError.self) { try await client.response(for: failing) }

            clock.advance(by: .seconds(600))
            failing.cachePolicy = nil
            let error = await #expect(throws: NetworkError.self, "too stale to stand in") { try await client.response(for: failing) }
            #expect(error?.status == 503)

            // The server is down: a connection failure is an outage too.
            let fresh = Entity(name: "prices", query: [QueryItem("cc", "max-age=10")])
            _ = try await client.response(for: fresh)
            clock.advance(by: .seconds(30))
            await server.shutdown()
            let down = try await client.response(for: fresh)
            #expect(down.value == "prices v1")
            #expect(down.metrics.cache == .stale)
            await client.shutdown()
        }
    }

    @Test("cacheOnly: a miss fails as not_cached with nothing sent; a stored response is served", arguments: ConformanceTransport.all)
    func cacheOnly(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            var offline = Entity(name: "offline", query: [QueryItem("cc", "max-age=5")])
            offline.cachePolicy = .cacheOnly
            let error = await #expect(throws: NetworkError.self) { try await client.response(for: offline) }
            #expect(error?.kind == .notCached)
            #expect(requests(server, "offline") == 0)

            offline.cachePolicy = nil
            _ = try await client.response(for: offline)
            clock.advance(by: .seconds(3600))
            offline.cachePolicy = .cacheOnly
            let served = try await client.response(for: offline)
            #expect(served.value == "offline v1")
            #expect(served.metrics.cache == .stale)
            #expect(requests(server, "offline") == 1)
            await client.shutdown()
        }
    }

    @Test("a disk cache shared by two clients: one stores, the other hits", arguments: ConformanceTransport.all)
    func sharedDisk(transport: ConformanceTransport) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let entity = Entity(name: "shared", query: [QueryItem("cc", "max-age=60")])
            let writer = try client(transport, server, clock: clock, cache: try .disk(directory: directory))
            _ = try await writer.response(for: entity)
            await writer.shutdown()
            let reader = try client(transport, server, clock: clock, cache: try .disk(directory: directory))
            let hit = try await reader.response(for: entity)
            #expect(hit.value == "shared v1")
            #expect(hit.metrics.cache == .hit)
            #expect(requests(server, "shared") == 1)
            await reader.shutdown()
        }
    }

    @Test("1,000 concurrent callers of one stale entry cause one revalidation", arguments: ConformanceTransport.all)
    func oneRevalidation(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            let entity = Entity(name: "popular", query: [QueryItem("cc", "max-age=60")])
            _ = try await client.response(for: entity)
            clock.advance(by: .seconds(61))
            let results = try await withThrowingTaskGroup(of: RequestMetrics.CacheResult?.self) { group in
                for _ in 0..<1_000 { group.addTask { try await client.response(for: entity).metrics.cache } }
                return try await group.reduce(into: [RequestMetrics.CacheResult?]()) { $0.append($1) }
            }
            #expect(results.count == 1_000)
            #expect(results.filter { $0 == .revalidated }.count == 1)
            #expect(results.filter { $0 == .hit }.count == 999)
            #expect(requests(server, "popular") == 2, "one first load, one revalidation")
            await client.shutdown()
        }
    }

    @Test("a hit never waits for a queue slot", arguments: ConformanceTransport.all)
    func hitSkipsTheQueue(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try transport.makeClient(server) { configuration in
                configuration.cache = .memory()
                configuration.timeSource = clock
                configuration.queue = RequestQueue.Limits(maxConcurrent: 1)
            }
            let entity = Entity(name: "menu", query: [QueryItem("cc", "max-age=60")])
            _ = try await client.response(for: entity)
            let held = Task { try await client.send(Held()) }
            #expect(await eventually { server.requestsInFlight == 1 }, "the only slot is taken")
            let hit = try await client.response(for: entity)
            #expect(hit.metrics.cache == .hit)
            server.release("cache-queue")
            _ = try await held.value
            await client.shutdown()
        }
    }

    struct Held: Endpoint {
        typealias Output = Data
        var path: String { "hold/cache-queue" }
    }

    @Test("a body the caller stopped reading is never stored; one read to the end is", arguments: ConformanceTransport.all)
    func abandonedBody(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let cache = ResponseCache.memory()
            let small = try transport.makeClient(server) { configuration in
                configuration.cache = cache
                configuration.timeSource = clock
                configuration.maxResponseBytes = 64 << 10
            }
            let large = try client(transport, server, clock: clock, cache: cache)
            let entity = Entity(name: "big", query: [QueryItem("cc", "max-age=60"), QueryItem("bytes", "\(1 << 20)")])
            let error = await #expect(throws: NetworkError.self) { try await small.response(for: entity) }
            #expect(error?.kind == .responseTooLarge)
            let whole = try await large.response(for: entity)
            #expect(whole.metrics.cache == .miss, "the body cut off at 64 KiB was not stored")
            #expect(whole.value.utf8.count == 1 << 20)
            let again = try await large.response(for: entity)
            #expect(again.metrics.cache == .hit)
            #expect(again.value == whole.value)
            await small.shutdown()
            await large.shutdown()
        }
    }

    struct Redirect: Endpoint {
        typealias Output = String
        var status: Int
        var control: String?
        var path: String { "redirect-to" }
        var query: [QueryItem] {
            [QueryItem("url", "/cacheable/target?cc=max-age%3D60"), QueryItem("status", "\(status)")]
                + (control.map { [QueryItem("cc", $0)] } ?? [])
        }
    }

    @Test(
        "a cacheable permanent redirect and its target are both served from the cache; a plain 302 is asked again",
        arguments: ConformanceTransport.all)
    func redirects(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            let permanent = Redirect(status: 301, control: "max-age=60")
            #expect(try await client.response(for: permanent).value == "target v1")
            let again = try await client.response(for: permanent)
            #expect(again.value == "target v1")
            #expect(again.metrics.cache == .hit)
            #expect(server.requestLog.count == 2, "the redirect and the target, once each: \(server.requestLog)")

            let temporary = Redirect(status: 302, control: nil)
            _ = try await client.response(for: temporary)
            let second = try await client.response(for: temporary)
            #expect(second.value == "target v1")
            #expect(second.metrics.cache == .hit, "the target is still fresh")
            #expect(server.requestLog.filter { $0.hasPrefix("/redirect-to") && $0.contains("status=302") }.count == 2)
            await client.shutdown()
        }
    }

    @Test("stale-while-revalidate: the stale response at once, a revalidation in the background", arguments: ConformanceTransport.all)
    func staleWhileRevalidate(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            let entity = Entity(name: "feed", query: [QueryItem("cc", "max-age=10, stale-while-revalidate=60")])
            _ = try await client.response(for: entity)
            clock.advance(by: .seconds(30))
            var changed = entity
            changed.headers = ["X-Version": "2"]
            let stale = try await client.response(for: changed)
            #expect(stale.value == "feed v1", "answered from the cache at once")
            #expect(stale.metrics.cache == .stale)
            #expect(await eventually { requests(server, "feed") == 2 }, "one revalidation in the background")
            // Polled (bounded), as `eventually` does: the background task stores the answer once
            // it has read the body, a moment after the server saw the request.
            var fresh = try await client.response(for: entity)
            for _ in 0..<3_000 where fresh.value != "feed v2" {
                try await Task.sleep(for: .milliseconds(10))
                fresh = try await client.response(for: entity)
            }
            #expect(fresh.value == "feed v2", "its answer was stored")
            #expect(fresh.metrics.cache == .hit)
            #expect(requests(server, "feed") == 2)

            clock.advance(by: .seconds(200))
            let late = try await client.response(for: changed)
            #expect(late.metrics.cache == .revalidated, "past the window: revalidated before answering")
            await client.shutdown()
        }
    }

    @Test("Last-Modified alone: a heuristic lifetime, then revalidation with If-Modified-Since", arguments: ConformanceTransport.all)
    func lastModified(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try client(transport, server, clock: clock)
            // Modified 10 days before now (the response has no Date, so now is when it arrived):
            // a heuristic lifetime of 10% of that, one day at most.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let modified = formatter.string(from: Date(timeIntervalSinceNow: -10 * 86_400))
            let entity = Entity(name: "report", query: [QueryItem("noETag", "1"), QueryItem("lastModified", modified)])
            _ = try await client.response(for: entity)
            clock.advance(by: .seconds(3600))
            #expect(try await client.response(for: entity).metrics.cache == .hit, "within the heuristic lifetime")
            clock.advance(by: .seconds(2 * 86_400))
            let revalidated = try await client.response(for: entity)
            #expect(revalidated.metrics.cache == .revalidated)
            #expect(revalidated.value == "report v1")
            #expect(requests(server, "report") == 2)
            await client.shutdown()
        }
    }
}
