import ArgumentParser
import Courier
import CourierCurl
import CourierOpenAPI
import CourierTestServer
import Foundation
import InventoryClient
import OpenAPIRuntime

#if AsyncHTTPClient
    import OpenAPIAsyncHTTPClient
#endif

/// `courier-bench openapi`: one generated-client operation (`getItem`) three ways, side by side in
/// one process against the embedded server: the generated client over `CourierClientTransport`
/// on the curl transport, the same generated client over swift-openapi-async-http-client's
/// transport, and Courier's own ``Endpoint`` for the same call on the curl transport.
public struct OpenAPICommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract:
            "Compares a generated OpenAPI client over Courier (curl) with the same client over AsyncHTTPClient and with Courier's own endpoint.",
        discussion: """
            The call is getItem of Examples/OpenAPIExample/openapi.yaml (a JSON object of about 50 bytes), served by \
            the embedded server's InventoryService over HTTP/1.1. The variants take turns for --rounds rounds of \
            --seconds each, so that the machine's drift touches them alike; each reports calls per second (the median \
            round) and its latency percentiles over all rounds, then the ratios.
            """)

    @Option(help: "Callers in flight at once (closed loop).")
    var concurrency: Int = 16
    @Option(help: "Seconds per variant per round.")
    var seconds: Int = 3
    @Option(help: "Rounds; the variants take turns in each.")
    var rounds: Int = 3

    public init() {}

    /// One way of making the call.
    struct Variant: Sendable {
        let name: String
        let call: @Sendable () async -> CallOutcome
        let shutdown: @Sendable () async -> Void
    }

    struct GetItem: Endpoint {
        typealias Output = InventoryService.Item
        var path: String { "inventory/items/7" }
    }

    public func run() async throws {
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 1024") }
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 600") }
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be 1 to 20") }
        let server = try await TestServer.start()
        let variants = try Self.variants(baseURL: server.baseURL, concurrency: concurrency)
        var perSecond: [String: [Double]] = [:]
        var histograms: [String: LatencyHistogram] = [:]
        for variant in variants {  // A warm-up: connections open, code paged in.
            _ = await LoadLoop.run(concurrency: concurrency, for: .seconds(1), maxRequests: 2000, call: variant.call)
        }
        for round in 1...rounds {
            for variant in variants {
                let tally = await LoadLoop.run(concurrency: concurrency, for: .seconds(seconds), maxRequests: nil, call: variant.call)
                if tally.failed > 0 {
                    throw ValidationError("\(variant.name): \(tally.failed) calls failed, the first: \(tally.firstError ?? "?")")
                }
                let elapsed = Double(tally.elapsed.components.seconds) + Double(tally.elapsed.components.attoseconds) / 1e18
                perSecond[variant.name, default: []].append(Double(tally.completed) / max(elapsed, 1e-9))
                histograms[variant.name, default: LatencyHistogram()].add(tally.histogram)
            }
            FileHandle.standardError.write(Data("round \(round) of \(rounds) done\n".utf8))
        }
        for variant in variants { await variant.shutdown() }
        await server.shutdown()

        print("getItem, concurrency \(concurrency), \(rounds) rounds × \(seconds) s, HTTP/1.1 on loopback")
        print("variant                               calls/s (median round)  p50 ms   p99 ms")
        var medians: [String: Double] = [:]
        for variant in variants {
            let rates = (perSecond[variant.name] ?? []).sorted()
            let median = rates.isEmpty ? 0 : rates[rates.count / 2]
            medians[variant.name] = median
            let summary = (histograms[variant.name] ?? LatencyHistogram()).summary
            print(
                variant.name.padding(toLength: 38, withPad: " ", startingAt: 0)
                    + String(format: "%-24.0f%-9.3f%.3f", median, summary.p50 / 1000, summary.p99 / 1000))
        }
        let bridge = medians[Self.bridgeName] ?? 0
        if let own = medians[Self.endpointName], own > 0 {
            print(String(format: "generated client over Courier ÷ Courier's own endpoint (calls/s): %.2f×", bridge / own))
        }
        if let ahc = medians[Self.ahcName], ahc > 0 {
            print(String(format: "generated client over Courier ÷ over swift-openapi-async-http-client (calls/s): %.2f×", bridge / ahc))
        }
    }

    static let bridgeName = "openapi over Courier (curl)"
    static let ahcName = "openapi over swift-openapi-ahc"
    static let endpointName = "Courier endpoint (curl)"

    /// The variants, each with its own client and connections.
    static func variants(baseURL: String, concurrency: Int) throws -> [Variant] {
        guard let serverURL = URL(string: baseURL + InventoryService.prefix) else {
            throw ValidationError("the embedded server's URL \(baseURL) is not a URL")
        }
        var configuration = ClientConfiguration(baseURL: baseURL, transport: "curl")
        configuration.exportsMetrics = false
        let registry = TransportRegistry([.curl()])
        let bridged = try NetworkClient(configuration: configuration, registry: registry)
        let own = try NetworkClient(configuration: configuration, registry: registry)
        let generated = Client(serverURL: serverURL, transport: CourierClientTransport(client: bridged))
        var variants = [
            Variant(
                name: bridgeName, call: { await outcome { try await generated.getItem(path: .init(itemID: 7)).ok.body.json.id } },
                shutdown: { await bridged.shutdown() }),
            Variant(name: endpointName, call: { await outcome { try await own.send(GetItem()).id } }, shutdown: { await own.shutdown() }),
        ]
        #if AsyncHTTPClient
            let ahcClient = Client(serverURL: serverURL, transport: AsyncHTTPClientTransport())
            variants.insert(
                Variant(
                    name: ahcName, call: { await outcome { try await ahcClient.getItem(path: .init(itemID: 7)).ok.body.json.id } },
                    shutdown: {}), at: 1)
        #endif
        return variants
    }

    /// A call's outcome: success when it returned item 7.
    static func outcome(_ call: () async throws -> Int) async -> CallOutcome {
        do {
            let id = try await call()
            return id == 7 ? .success(bytes: 0, httpVersion: nil) : .failure("wrong item \(id)")
        } catch {
            return .failure("\(error)")
        }
    }
}
