import Courier
import CourierResilience
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Hedging over a real transport.
extension ConformanceCases {
    /// An endpoint whose first request the server holds for 10 s while later ones answer at once
    /// (`/tail/2?key=`), after ten quick calls under the same endpoint name: the held call gets a
    /// copy after a few milliseconds, the copy's answer wins, and the held request is cancelled
    /// (the server sees it end). Nothing here waits for a timeout.
    public static func hedging(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) {
                var policy = HedgingPolicy()
                policy.minimumSamples = 10
                policy.window = 20
                policy.maxExtraShare = 0.1
                $0.resilience.hedging = policy
            }
            for _ in 0..<10 { _ = try await client.send(NamedEndpoint(path: "bytes/1")) }
            let key = UUID().uuidString
            let before = server.requestCount
            let response = try await client.response(
                for: NamedEndpoint(path: "tail/2", query: [QueryItem("ms", "10000"), QueryItem("key", key)]))
            #expect(String(decoding: response.value, as: UTF8.self) == "tail")
            #expect(response.metrics.hedges == 1)
            #expect(response.metrics.hedgeWon)
            #expect(server.requestCount - before == 2)
            #expect(await eventually { server.requestsInFlight == 0 }, "the held first copy was not cancelled")
            await client.shutdown()
        }
    }
}

/// A raw call under one endpoint name, so that different paths share hedging's latency window.
struct NamedEndpoint: Endpoint {
    typealias Output = Data
    var path: String
    var query: [QueryItem] = []
    var endpointName: String? { "hedged" }
}
