// The cost of Courier's default middleware chain over the mock transport: the same call with no
// middleware, and with team headers, retry, timing/metrics export, logging at its default level
// and failure alerts. The difference per call is the chain's overhead (target: at most 2 µs and a
// handful of allocations).
import Benchmark
import Courier
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
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        maxDuration: .seconds(5),
        maxIterations: 200_000
    )
    for fullChain in [false, true] {
        Benchmark(fullChain ? "call: default middleware chain" : "call: no middleware") { benchmark in
            let client = try makeClient(fullChain: fullChain)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await client.send(Ping()))
            }
        }
    }
}
