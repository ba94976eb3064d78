import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// HTTP/2's own signals over every transport that reaches an HTTP/2 server Courier can run
/// (`HTTP2FaultServer`): a stream refused with `REFUSED_STREAM`, or above a `GOAWAY`'s last id,
/// was never processed and is sent again once, where the transport can tell (each transport
/// declares what it does: `ConformanceTransport.refusedStream`, `goAwayStream`); a stream reset
/// with another code may have been processed, so only what may be repeated is sent again. Also
/// what each transport does when a connection's stream limit is reached. Time is a
/// `ManualTimeSource`; retries wait nothing (their jitter is 0).
@Suite("HTTP/2 refusals, GOAWAY and resets over real transports", .timeLimit(.minutes(2)))
struct HTTP2FaultTests {
    /// A transport and how it reaches the fault server: over TLS, or cleartext with prior knowledge.
    struct Route: Sendable, CustomTestStringConvertible {
        var transport: ConformanceTransport
        var tls: Bool
        var testDescription: String { "\(transport.name) over \(tls ? "TLS" : "h2c")" }

        func client(
            _ server: HTTP2FaultServer, middleware: [any Middleware] = [], configure: (inout ClientConfiguration) -> Void = { _ in }
        ) throws -> NetworkClient {
            try transport.makeClient(baseURL: server.baseURL, middleware: middleware) { configuration in
                ConformanceTransport.reach(tls ? .tls : .h2c, with: &configuration)
                configuration.timeSource = ManualTimeSource()
                configure(&configuration)
            }
        }
    }

    /// Every transport that reaches an HTTP/2 server Courier can run: over TLS where it can trust
    /// the test CA, over h2c where it speaks it. (URLSession on Linux does neither: declared in
    /// `ConformanceTests.http2OverTLS` and `cleartextHTTP2`.)
    static var routes: [Route] {
        ConformanceTransport.all.filter { $0.privateCA == .trusted }.map { Route(transport: $0, tls: true) }
            + ConformanceTransport.all.filter { $0.cleartextHTTP2 == .supported }.map { Route(transport: $0, tls: false) }
    }

    /// A GET and a POST without an idempotency key that each meet `step` once, with what the
    /// transport declares for it.
    static func expectUnprocessed(
        _ step: HTTP2FaultServer.Step, handled: ConformanceTransport.UnprocessedStream, client: NetworkClient, server: HTTP2FaultServer,
        before: () async throws -> Void = {}
    ) async throws {
        for (name, method) in [("get-\(step)", HTTPRequest.Method.get), ("post-\(step)", .post)] {
            server.script(name, [step])
            try await before()
            let endpoint = RawEndpoint(path: "script/\(name)", method: method, body: method == .post ? .text("once") : nil)
            let resent = handled == .resentByCourier || (handled == .resentByLibraryWhenRepeatable && method == .get)
            if resent {
                let response = try await client.response(for: endpoint)
                #expect(response.value == Data("scripted".utf8))
                #expect(server.scriptedRequests(name) == 2, "\(method): sent again exactly once")
                let metrics = response.metrics
                #expect(metrics.unsentRetries + metrics.transportResends == 1, "\(method): the resend is counted")
                #expect(metrics.attempts == 1 + metrics.unsentRetries)
            } else {
                let error = await expectNetworkError(.connectionClosed) { try await client.send(endpoint) }
                #expect(server.scriptedRequests(name) == 1, "\(method): not sent again")
                #expect(error?.neverReachedServer == false)
            }
        }
    }

    @Test("a refused stream is sent again once where the transport can tell, whatever the method", arguments: routes)
    func refused(route: Route) async throws {
        let server = try await HTTP2FaultServer.start(tls: route.tls)
        let client = try route.client(server)
        try await Self.expectUnprocessed(.refuse, handled: route.transport.refusedStream, client: client, server: server)
        // Refused every time: sent twice, never a third time.
        server.script("always", [.refuse, .refuse, .refuse])
        _ = await expectNetworkError(.connectionClosed) { try await client.send(RawEndpoint(path: "script/always")) }
        #expect(server.scriptedRequests("always") == 2)
        await client.shutdown()
        await server.shutdown()
    }

    @Test("a stream above a GOAWAY's last id is sent again where the transport can tell; the stream below it finishes", arguments: routes)
    func goAway(route: Route) async throws {
        let server = try await HTTP2FaultServer.start(tls: route.tls)
        let client = try route.client(server)
        var held: [Task<Data, any Error>] = []
        try await Self.expectUnprocessed(.goAway, handled: route.transport.goAwayStream, client: client, server: server) {
            // A stream below the GOAWAY's last id, open on the connection when it comes.
            let gate = "below-\(held.count)"
            held.append(Task { try await client.send(RawEndpoint(path: "hold/\(gate)")) })
            let open = held.count
            #expect(await eventually { server.streamsOpen == open })
        }
        for (index, call) in held.enumerated() {
            server.release("below-\(index)")
            #expect(try await call.value == Data("held".utf8), "the stream below the GOAWAY's last id finishes")
        }
        await client.shutdown()
        await server.shutdown()
    }

    @Test(
        "a stream reset after the request arrived: a GET is retried by the policy, a POST without a key is not sent again",
        arguments: routes)
    func reset(route: Route) async throws {
        let server = try await HTTP2FaultServer.start(tls: route.tls)
        let retry = RetryMiddleware(policy: RetryPolicy(), budget: RetryBudget(), random: { 0 })
        let client = try route.client(server, middleware: [retry])
        server.script("post", [.reset])
        let error = await expectNetworkError(.connectionClosed) {
            try await client.send(RawEndpoint(path: "script/post", method: .post, body: .text("once")))
        }
        #expect(error?.neverReachedServer == false)
        #expect(server.scriptedRequests("post") == 1, "a POST the server may have acted on is never sent again")
        server.script("get", [.reset])
        #expect(try await client.send(RawEndpoint(path: "script/get")) == Data("scripted".utf8))
        #expect(server.scriptedRequests("get") == 2)
        await client.shutdown()
        await server.shutdown()
    }

    @Test("more calls than a connection's stream limit: another connection or a wait, as declared; every call finishes", arguments: routes)
    func streamLimit(route: Route) async throws {
        let server = try await HTTP2FaultServer.start(tls: route.tls, maxConcurrentStreams: 2)
        let client = try route.client(server)
        _ = try await client.send(RawEndpoint(path: "warm"))
        let calls = (0..<6).map { _ in Task { try await client.send(RawEndpoint(path: "hold/all")) } }
        switch route.transport.fullHTTP2Connection {
        case .opensAnother:
            // More calls get a stream than one connection allows, on more than one connection.
            #expect(await eventually { server.connectionsOpened >= 2 && server.streamsOpen > 2 })
        case .waits:
            // Two run on the one connection; the others wait for them.
            #expect(await eventually { server.streamsOpen == 2 })
            #expect(server.connectionsOpened == 1)
        }
        server.release("all")
        for call in calls { #expect(try await call.value == Data("held".utf8)) }
        await client.shutdown()
        await server.shutdown()
    }
}
