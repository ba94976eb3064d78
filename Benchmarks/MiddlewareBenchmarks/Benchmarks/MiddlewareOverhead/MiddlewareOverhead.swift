// The cost of Courier's default middleware chain over the mock transport: the same call with no
// middleware, and with team headers, retry, timing/metrics export, logging at its default level
// and failure alerts. The difference per call is the chain's overhead (target: at most 2 µs and a
// handful of allocations).
import Benchmark
import Courier
import CourierAlerts
import CourierMock
import Foundation

struct Ping: Endpoint {
    typealias Output = Data
    var path: String { "ping" }
    var team: String? { "pay" }
}

func makeClient(fullChain: Bool) throws -> NetworkClient {
    let mock = MockTransport()
    mock.stub(.get, "/ping", .status(200, body: Data("pong".utf8)))
    var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
    guard fullChain else {
        configuration.exportsMetrics = false
        return try NetworkClient(configuration: configuration, transport: mock)
    }
    configuration.headerRules = [
        try HeaderRule(team: "pay", headers: ["X-Team": .fixed("pay"), "X-Request-ID": .requestID]),
        try HeaderRule(headers: ["X-Service": .fixed("bench")]),
    ]
    configuration.retry = RetryPolicy()
    configuration.exportsMetrics = true  // swift-metrics with no backend bootstrapped, as in a service without one
    let alerts = try FailureAlerts(
        rules: [
            AlertRule(name: "down", scope: .eachEndpoint, trigger: .consecutiveFailures(5)),
            AlertRule(name: "rate", scope: .eachTeam, trigger: .errorRate(threshold: 0.5, window: .seconds(60), minimumCalls: 20)),
        ],
        sink: LogAlertSink(logger: configuration.logger))
    return try NetworkClient(configuration: configuration, transport: mock, observers: [alerts])
}

let benchmarks: @Sendable () -> Void = {
    // Each sample runs 1,000 calls on one warm client, made once: the figures (scaled, marked *)
    // are per call, without the harness's per-sample cost or a fresh client's first-call work.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(5),
        maxIterations: 2_000
    )
    for fullChain in [false, true] {
        let client: NetworkClient
        do {
            client = try makeClient(fullChain: fullChain)
        } catch {
            print("could not make the client: \(error)")
            return
        }
        Benchmark(fullChain ? "call: default middleware chain" : "call: no middleware") { benchmark in
            for _ in 0..<100 { blackHole(try await client.send(Ping())) }  // warm: handles, groups, labels
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await client.send(Ping()))
            }
        }
    }
}
