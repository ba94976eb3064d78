import CourierCookies
import CourierMock
import Foundation
import Testing

@testable import Courier
@testable import CourierCache
@testable import CourierResilience

/// Records the order in which middleware see requests and responses.
final class Trace: Sendable {
    private let events = Locked<[String]>([])
    func append(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

struct Tagging: Middleware {
    let tag: String
    let trace: Trace

    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
        -> TransportResponse
    {
        trace.append("request \(tag)")
        var request = request
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-Chain")!, value: tag))
        var response = try await next(request, body, context)
        trace.append("response \(tag)")
        response.head.headerFields.append(HTTPField(name: HTTPField.Name("X-Seen")!, value: tag))
        return response
    }
}

/// Answers without calling `next`.
struct ShortCircuit: Middleware {
    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
        -> TransportResponse
    {
        TransportResponse(head: HTTPResponse(status: .ok), body: ResponseBody(data: Data(#"{"id":0,"name":"cached"}"#.utf8)))
    }
}

/// Calls `next` twice when the first answer is a 503.
struct RetryOnce: Middleware {
    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
        -> TransportResponse
    {
        let first = try await next(request, body, context)
        guard first.head.status.code == 503 else { return first }
        return try await next(request, body, context)
    }
}

@Suite("Middleware chain")
struct MiddlewareChainTests {
    struct Ping: Endpoint {
        typealias Output = User
        var path: String { "ping" }
    }

    @Test("requests pass middleware in array order, responses in reverse")
    func order() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", .json(User(id: 1, name: "x")))
        let trace = Trace()
        let client = try makeClient(mock, middleware: ["A", "B", "C"].map { Tagging(tag: $0, trace: trace) })
        let response = try await client.response(for: Ping())
        #expect(trace.all == ["request A", "request B", "request C", "response C", "response B", "response A"])
        #expect(mock.recordedRequests.first?.head.headerFields[values: HTTPField.Name("X-Chain")!] == ["A", "B", "C"])
        #expect(response.head.headerFields[values: HTTPField.Name("X-Seen")!] == ["C", "B", "A"])
    }

    @Test("middleware can short-circuit: the transport is never called")
    func shortCircuit() async throws {
        let mock = MockTransport()
        let client = try makeClient(mock, middleware: [ShortCircuit()])
        #expect(try await client.send(Ping()).name == "cached")
        #expect(mock.recordedRequests.isEmpty)
        #expect(try await client.response(for: Ping()).metrics.attempts == 0)
    }

    @Test("middleware can repeat the rest of the chain; attempts are counted")
    func repeatChain() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", responses: [.status(503), .json(User(id: 2, name: "second"))])
        let client = try makeClient(mock, middleware: [RetryOnce()])
        let response = try await client.response(for: Ping())
        #expect(response.value.name == "second")
        #expect(response.metrics.attempts == 2)
        #expect(mock.recordedRequests.count == 2)
    }

    /// Calls `next` a given number of times (a broken network middleware when not 1).
    struct CallsNext: Middleware {
        let times: Int
        func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
            -> TransportResponse
        {
            var last = TransportResponse(head: HTTPResponse(status: .ok))
            for _ in 0..<times { last = try await next(request, body, context) }
            return last
        }
    }

    @Test("application middleware run once per call, network middleware once per attempt, in a pinned order")
    func applicationThenNetwork() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", responses: [.status(503), .json(User(id: 2, name: "second"))])
        let trace = Trace()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        let client = try NetworkClient(
            configuration: configuration, transport: mock,
            middleware: [Tagging(tag: "A", trace: trace), RetryOnce(), Tagging(tag: "B", trace: trace)],
            networkMiddleware: [Tagging(tag: "N", trace: trace)])
        let response = try await client.response(for: Ping())
        #expect(
            trace.all == [
                "request A", "request B", "request N", "response N", "response B", "request B", "request N", "response N", "response B",
                "response A",
            ])
        #expect(response.metrics.attempts == 2)
        #expect(
            mock.recordedRequests.map { $0.head.headerFields[values: HTTPField.Name("X-Chain")!] } == [["A", "B", "N"], ["A", "B", "N"]])
    }

    @Test("a network middleware must call next exactly once (checked in debug builds)", arguments: [0, 2])
    func networkExactlyOnce(times: Int) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", .json(User(id: 1, name: "x")))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        let client = try NetworkClient(configuration: configuration, transport: mock, networkMiddleware: [CallsNext(times: times)])
        #if DEBUG
            let error = await #expect(throws: NetworkError.self) { try await client.send(Ping()) }
            #expect(error?.kind == .middlewareMisuse)
            #expect(error?.message.contains("CallsNext") == true)
        #endif
        #expect(mock.recordedRequests.count <= 1)
    }

    @Test("one chain, built-ins included: team headers, application, retry, follow-up, cache, bridge, queue gate, network, transport")
    func wholeOrder() async throws {
        let (mock, trace, shared) = try Self.redirectingSetup()
        var configuration = shared
        configuration.cache = .memory()  // the cache's link is there only with a cache
        let client = try NetworkClient(
            configuration: configuration, transport: mock,
            middleware: [Tagging(tag: "A", trace: trace), RetryOnce()], networkMiddleware: [Tagging(tag: "N", trace: trace)])
        #expect(
            client.linkOrder == [
                "TeamHeadersMiddleware", "Tagging", "RetryOnce", "RetryMiddleware", "FollowUpLink", "CacheLink", "BridgeLink", "QueueGate",
                "Tagging",
                "transport mock",
            ])
        #expect(client.middleware.count == 4, "team headers, A, RetryOnce and retry are the once-per-call middleware")
        let response = try await client.response(for: Ping())
        // The application middleware sees one call; the network middleware sees each hop.
        #expect(trace.all == ["request A", "request N", "response N", "request N", "response N", "response A"])
        #expect(response.value.name == "after the hop")
        #expect(response.metrics.attempts == 2)
        #expect(response.metrics.redirects == 1)
        #expect(mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("X-Team")!] } == ["t", "t"])
    }

    @Test("without network middleware (nor a cache) the built-ins run as one function: the same order, redirects, gate and attempts")
    func wholeOrderWithoutNetworkMiddleware() async throws {
        let (mock, trace, shared) = try Self.redirectingSetup()
        var configuration = shared
        configuration.queue = RequestQueue.Limits(maxConcurrent: 1)
        let client = try NetworkClient(configuration: configuration, transport: mock, middleware: [Tagging(tag: "A", trace: trace)])
        #expect(
            client.linkOrder == [
                "TeamHeadersMiddleware", "Tagging", "RetryMiddleware", "FollowUpLink", "BridgeLink", "QueueGate", "transport mock",
            ])
        let response = try await client.response(for: Ping())
        #expect(trace.all == ["request A", "response A"])
        #expect(response.value.name == "after the hop")
        #expect(response.metrics.attempts == 2)
        #expect(response.metrics.redirects == 1)
        #expect(mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("X-Team")!] } == ["t", "t"])
        #expect(mock.recordedRequests.map { $0.head.headerFields[.acceptEncoding] } == ["gzip, deflate", "gzip, deflate"])
    }

    @Test("a client that keeps cookies names the jar's step, between follow-up and the cache; each hop stores and sends by its own URL")
    func cookieStep() async throws {
        let (_, _, shared) = try Self.redirectingSetup()
        let mock = MockTransport()
        mock.stub(.get, "/ping", responses: [.status(302, headers: ["Location": "/pong", "Set-Cookie": "hop=1; Path=/"])])
        mock.stub(.get, "/pong", .json(User(id: 3, name: "after the hop")))
        var configuration = shared
        configuration.keepsCookies = true
        configuration.cache = .memory()
        let client = try NetworkClient(configuration: configuration, transport: mock)
        #expect(
            client.linkOrder == [
                "TeamHeadersMiddleware", "RetryMiddleware", "FollowUpLink", "CookieJarLink", "CacheLink", "BridgeLink", "QueueGate",
                "transport mock",
            ])
        let response = try await client.response(for: Ping())
        #expect(response.value.name == "after the hop")
        // The first hop's answer set the cookie; the redirect's hop, below follow-up, sent it.
        #expect(mock.recordedRequests.map { $0.head.headerFields[.cookie] } == [nil, "hop=1"])
        var without = shared
        without.keepsCookies = false
        #expect(try !NetworkClient(configuration: without, transport: mock).linkOrder.contains("CookieJarLink"))
    }

    #if DEBUG
        /// One call, one hop, no revalidation: each step once (a redirect would pass the hop's steps
        /// again; a background revalidation would record after the call).
        @Test("linkOrder is what a call runs: every step, in order, recorded as the call passes it (debug builds)")
        func linkOrderIsWhatRuns() async throws {
            let (_, trace, shared) = try Self.redirectingSetup()
            for cookies in [false, true] {
                let mock = MockTransport()
                mock.stub(.get, "/ping", .json(User(id: 1, name: "once")))
                var configuration = shared
                configuration.keepsCookies = cookies
                configuration.queue = RequestQueue.Limits(maxConcurrent: 2)
                configuration.cache = ResponseCache.memory()
                configuration.resilience.circuitBreaker = CircuitBreakerPolicy()
                configuration.resilience.hedging = HedgingPolicy()
                let client = try NetworkClient(
                    configuration: configuration, transport: mock, middleware: [Tagging(tag: "A", trace: trace)],
                    networkMiddleware: [Tagging(tag: "N", trace: trace)])
                let passed = LinkTrace()
                _ = try await LinkTrace.$current.withValue(passed) { try await client.response(for: Ping()) }
                #expect(passed.steps == client.linkOrder, "cookies \(cookies): ran \(passed.steps), named \(client.linkOrder)")
                // The wings' outer links below retry, the breaker first; then follow-up.
                let outer = Array(client.linkOrder.prefix { $0 != "FollowUpLink" })
                #expect(Array(outer.suffix(3)) == ["RetryMiddleware", "CircuitBreakerLink", "HedgingLink"])
                #expect(client.linkOrder.contains("CookieJarLink") == cookies)
                await client.shutdown()
            }
        }
    #endif

    /// A mock that redirects `/ping` to `/pong`, a trace, and a configuration with a team header
    /// rule and retry: what the whole-order tests share.
    private static func redirectingSetup() throws -> (MockTransport, Trace, ClientConfiguration) {
        let mock = MockTransport()
        mock.stub(.get, "/ping", responses: [.status(302, headers: ["Location": "/pong"])])
        mock.stub(.get, "/pong", .json(User(id: 3, name: "after the hop")))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.exportsMetrics = false
        configuration.headerRules = [try HeaderRule(headers: ["X-Team": .fixed("t")])]
        configuration.retry = RetryPolicy()
        return (mock, Trace(), configuration)
    }
}
