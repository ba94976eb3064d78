import Courier
import CourierConformance
import CourierCurl
import CourierTestServer
import CourierTestSupport
import Foundation
import MetricsTestKit
import Testing

/// The pool made visible: the curl transport's exact connection counts against the server's own,
/// the queue's calls per host, and both as swift-metrics gauges.
@Suite("Pool status")
struct PoolStatusTests {
    struct Get: Endpoint {
        typealias Output = Data
        var path: String
        var query: [QueryItem] = []
    }

    @Test("curl counts its connections exactly: one reused keep-alive connection, then several at once, then none")
    func curlConnections() async throws {
        try await withServer { server in
            let client = try ConformanceTransport.curl.makeClient(server)
            for _ in 0..<20 { _ = try await client.send(Get(path: "bytes/10")) }
            let address = "127.0.0.1:\(server.port)"
            var pool = try #require(client.poolStatus.connections)
            #expect(pool.transport == "curl")
            #expect(pool.addresses[address]?.open == 1)
            #expect(pool.addresses[address]?.opened == 1)
            #expect(pool.transfersOnNewConnections == 1)
            #expect(pool.transfersOnReusedConnections == 19)
            #expect(server.connectionsOpened == 1)

            let gate = "pool-\(UUID().uuidString)"
            let held = (0..<4).map { _ in Task { try await client.send(Get(path: "hold/\(gate)")) } }
            #expect(await eventually { server.requestsInFlight == 4 })
            pool = try #require(client.poolStatus.connections)
            #expect(pool.addresses[address]?.open == server.connectionsOpen)
            #expect(pool.addresses[address]?.open == 4)
            server.release(gate)
            for call in held { _ = try await call.value }
            pool = try #require(client.poolStatus.connections)
            #expect(pool.addresses[address]?.opened == server.connectionsOpened)
            await client.shutdown()
        }
    }

    @Test("the transport's connections close with it")
    func closedAtShutdown() async throws {
        try await withServer { server in
            let curl = try CurlTransport()
            let client = try NetworkClient(configuration: ClientConfiguration(baseURL: server.baseURL, transport: "curl"), transport: curl)
            _ = try await client.send(Get(path: "bytes/10"))
            #expect(curl.connectionPool?.openConnections == 1)
            await client.shutdown()
            #expect(curl.connectionPool?.openConnections == 0)
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }

    @Test("the queue's calls running and waiting per host, and every figure as a gauge")
    func queueAndGauges() async throws {
        try await withServer { server in
            let queue = try RequestQueue(name: "pool", limits: .init(maxConcurrent: 1, maxConcurrentPerHost: 1))
            let client = try NetworkClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, transport: "curl"), transport: CurlTransport(), queue: queue)
            let gate = "pool-queue-\(UUID().uuidString)"
            // Three different URLs, so the queue does not join them into one transfer.
            let calls = (0..<3).map { index in
                Task { try await client.send(Get(path: "hold/\(gate)", query: [QueryItem("n", "\(index)")])) }
            }
            let host = "127.0.0.1:\(server.port)"
            #expect(await eventually { client.poolStatus.queue?.waitingByHost[host] == 2 })
            // The running call's connection is open once the server holds its request.
            #expect(await eventually { server.requestsInFlight == 1 })
            let status = client.poolStatus
            #expect(status.queue?.runningByHost[host] == 1)

            let metrics = TestMetrics()
            client.recordPoolMetrics(factory: metrics)
            #expect(try metrics.expectGauge("courier_queue_running", [("queue", "pool"), ("host", host)]).lastValue == 1)
            #expect(try metrics.expectGauge("courier_queue_waiting", [("queue", "pool"), ("host", host)]).lastValue == 2)
            let address = "127.0.0.1:\(server.port)"
            #expect(try metrics.expectGauge("courier_pool_connections_open", [("transport", "curl"), ("address", address)]).lastValue == 1)

            server.release(gate)
            for call in calls { _ = try await call.value }
            client.recordPoolMetrics(factory: metrics)
            // Gone from the queue now: recorded as 0, not left at their last value.
            #expect(try metrics.expectGauge("courier_queue_waiting", [("queue", "pool"), ("host", host)]).lastValue == 0)
            #expect(try metrics.expectGauge("courier_pool_transfers", [("transport", "curl"), ("connection", "reused")]).lastValue == 2)
            await client.shutdown()
        }
    }

    @Test("HTTP/2 beyond one connection: at the stream limit, curl opens another connection to the host")
    func http2Connections() async throws {
        try await withServer(mode: .tls) { server in
            var curl = CurlTransport.Configuration()
            curl.maxConcurrentStreams = 2
            var configuration = ClientConfiguration(baseURL: server.baseURL, transport: "curl")
            configuration.tls.caPEM = TestCertificates.caPEM
            let transport = try CurlTransport(configuration: curl.applying(configuration))
            let client = try NetworkClient(configuration: configuration, transport: transport)
            _ = try await client.send(Get(path: "bytes/10"))  // one connection, HTTP/2 negotiated
            let gate = "h2-\(UUID().uuidString)"
            let held = (0..<6).map { index in Task { try await client.send(Get(path: "hold/\(gate)", query: [QueryItem("n", "\(index)")])) }
            }
            #expect(await eventually { server.requestsInFlight == 6 })
            // Six streams at two per connection need three connections at least; libcurl opens a
            // few more when several transfers start while a new connection is still negotiating
            // (seen: 5 under a loaded machine), never more than one per stream.
            let open = transport.connectionPool?.openConnections ?? 0
            #expect((3...6).contains(open), "\(open) connections for six streams at two per connection")
            #expect(open == server.connectionsOpen)
            server.release(gate)
            for call in held { _ = try await call.value }
            await client.shutdown()
        }
    }

    @Test("the connection lifetime is validated, naming its key")
    func lifetimeValidation() {
        var curl = CurlTransport.Configuration()
        curl.maxConnectionLifetime = .milliseconds(500)
        #expect(throws: ConfigurationError.self) { try curl.validate() }
        do {
            try curl.validate()
        } catch {
            #expect(error.key == "curl.maxConnectionLifetime")
        }
        curl.maxConnectionLifetime = .seconds(60)
        #expect(throws: Never.self) { try curl.validate() }
    }
}
