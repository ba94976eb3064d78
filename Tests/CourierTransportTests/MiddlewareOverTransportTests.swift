import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import CourierTracing
import Foundation
import Testing

/// The shipped middleware over real transports and the loopback server.
@Suite("Middleware over real transports")
struct MiddlewareOverTransportTests {
    struct TeamEcho: Endpoint {
        typealias Output = Echo
        var path: String { "echo" }
        var team: String? { "pay" }
        var headers: RequestHeaders { ["X-Own": "own"] }
    }

    struct Unavailable: Endpoint {
        typealias Output = Data
        var path: String { "status/503" }
    }

    @Test("team headers, tracing and retry reach the server the same way over every transport", arguments: ConformanceTransport.all)
    func fullChain(transport: ConformanceTransport) async throws {
        try await withServer { server in
            let records = Locked<[CallRecord]>([])
            struct Keep: CallObserver {
                let records: Locked<[CallRecord]>
                func callFinished(_ record: CallRecord) { records.withLock { $0.append(record) } }
            }
            var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport.name)
            configuration.headerRules = [
                try HeaderRule(team: "pay", headers: ["X-Team": .fixed("pay"), "X-Request-ID": .requestID, "X-Own": .fixed("rule")])
            ]
            var retry = RetryPolicy()
            retry.baseDelay = .milliseconds(1)
            retry.maxDelay = .milliseconds(5)
            configuration.retry = retry
            let client = try NetworkClient(
                configuration: configuration, transport: transport.make(configuration), middleware: [TracingMiddleware()],
                observers: [Keep(records: records)])

            let echo = try await client.send(TeamEcho())
            func header(_ name: String) -> [String] { echo.headers.filter { $0[0].lowercased() == name }.map { $0[1] } }
            #expect(header("x-team") == ["pay"])
            #expect(header("x-own") == ["own"])
            #expect(header("x-request-id").first?.isEmpty == false)
            let traceparent = try #require(header("traceparent").first)
            #expect(TraceParent(header: traceparent) != nil)

            let before = server.requestCount
            let error = await expectNetworkError(.httpStatus) { try await client.send(Unavailable()) }
            #expect(error?.metrics?.attempts == 3)
            #expect(server.requestCount - before == 3)
            let kept = records.withLock { $0 }
            #expect(kept.map(\.outcome) == [.success, .serverError])
            #expect(kept.first?.requestID == header("x-request-id").first)
            await client.shutdown()
        }
    }
}
