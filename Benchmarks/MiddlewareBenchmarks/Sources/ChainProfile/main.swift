// A plain loop over the same two clients as the MiddlewareOverhead benchmark, for profilers
// (`perf record`, `valgrind --tool=callgrind`), which cannot follow package-benchmark's runner.
//
//   swift build -c release --product ChainProfile
//   taskset -c 1 .build/release/ChainProfile full 300000
//
// Arguments: `both` (the default: the two clients in alternating rounds, and their difference),
// `bare` or `full`; then the number of calls (default 300,000). Prints ns per call.
import Courier
import CourierAlerts
import CourierMock
import Foundation
import HTTPTypes

struct Ping: Endpoint {
    typealias Output = Data
    var path: String { "ping" }
    var team: String? { "pay" }
}

/// Keeps `next`'s work from being optimised away.
final class Counter: @unchecked Sendable {
    var total = 0
    func add(_ value: Int) { total &+= value }
}

/// An observer that does nothing, to measure what reporting a call costs before any observer works.
final class NoObserver: CallObserver {
    func callFinished(_ record: CallRecord) {}
}

func makeClient(fullChain: Bool) throws -> NetworkClient {
    var mockConfiguration = MockTransport.Configuration()
    if ProcessInfo.processInfo.environment["RECORD"] == "0" { mockConfiguration.maxRecordedRequests = 0 }
    let mock = MockTransport(configuration: mockConfiguration)
    mock.stub(.get, "/ping", .status(200, body: Data("pong".utf8)))
    var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
    guard fullChain else {
        configuration.exportsMetrics = false
        return try NetworkClient(configuration: configuration, transport: mock)
    }
    // PARTS (comma-separated: headers, retry, metrics, alerts) narrows the full chain to some parts.
    let parts = Set((ProcessInfo.processInfo.environment["PARTS"] ?? "headers,retry,metrics,alerts").split(separator: ",").map(String.init))
    if parts.contains("fixed1") { configuration.headerRules = [try HeaderRule(headers: ["X-Service": .fixed("bench")])] }
    if parts.contains("rid") { configuration.headerRules = [try HeaderRule(headers: ["X-Request-ID": .requestID])] }
    if parts.contains("default3") { configuration.defaultHeaders = ["X-Team": "pay", "X-Service": "bench", "X-Other": "x"] }
    if parts.contains("headers") {
        configuration.headerRules = [
            try HeaderRule(team: "pay", headers: ["X-Team": .fixed("pay"), "X-Request-ID": .requestID]),
            try HeaderRule(headers: ["X-Service": .fixed("bench")]),
        ]
    }
    if parts.contains("retry") { configuration.retry = RetryPolicy() }
    configuration.exportsMetrics = parts.contains("metrics")
    var observers: [any CallObserver] = []
    if parts.contains("noop") { observers.append(NoObserver()) }
    if parts.contains("alerts") {
        observers.append(
            try FailureAlerts(
                rules: [
                    AlertRule(name: "down", scope: .eachEndpoint, trigger: .consecutiveFailures(5)),
                    AlertRule(
                        name: "rate", scope: .eachTeam, trigger: .errorRate(threshold: 0.5, window: .seconds(60), minimumCalls: 20)),
                ],
                sink: LogAlertSink(logger: configuration.logger)))
    }
    return try NetworkClient(configuration: configuration, transport: mock, observers: observers)
}

func perCall(_ client: NetworkClient, _ calls: Int) async throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try await client.send(Ping()) }
    let elapsed = start.duration(to: .now)
    return (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(calls)
}

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "both"
let calls = arguments.dropFirst().first.flatMap { Int($0) } ?? 300_000
if mode == "headers" {
    // The team-headers middleware alone, through `intercept`, with a `next` that returns at once.
    let rules = [
        try HeaderRule(team: "pay", headers: ["X-Team": .fixed("pay"), "X-Request-ID": .requestID]),
        try HeaderRule(headers: ["X-Service": .fixed("bench")]),
    ]
    let middleware = TeamHeadersMiddleware(rules: ProcessInfo.processInfo.environment["PARTS"] == "none" ? [] : rules)
    let request = HTTPRequest(method: .get, scheme: "https", authority: "api.test", path: "/ping")
    let context = RequestContext(
        requestID: "0123456789abcdef-1a2b", team: "pay", deadline: .now + .seconds(60), recorder: TransferRecorder(transport: "mock"))
    let response = TransportResponse(head: HTTPResponse(status: .ok))
    let nanoseconds = try await Task.detached {
        var count = 0
        let seen = Counter()
        let start = ContinuousClock.now
        for _ in 0..<calls {
            let answer = try await middleware.intercept(request, body: nil, context: context) { request, _, _ in
                seen.add(request.headerFields.count)
                return response
            }
            count &+= answer.head.status.code
        }
        let elapsed = start.duration(to: .now)
        precondition(count >= 0)
        return (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(calls)
    }.value
    print("headers alone: \(String(format: "%.0f", nanoseconds)) ns per call")
} else if mode == "both" {
    // Both clients in one process, in alternating rounds: the difference is the chain's cost.
    let bare = try makeClient(fullChain: false)
    let full = try makeClient(fullChain: true)
    let rounds = 20
    let (bareTimes, fullTimes) = try await Task.detached {
        for _ in 0..<2_000 {
            _ = try await bare.send(Ping())
            _ = try await full.send(Ping())
        }
        var bareTimes: [Double] = []
        var fullTimes: [Double] = []
        for _ in 0..<rounds {
            bareTimes.append(try await perCall(bare, calls / rounds))
            fullTimes.append(try await perCall(full, calls / rounds))
        }
        return (bareTimes.sorted(), fullTimes.sorted())
    }.value
    let median = { (times: [Double]) in times[times.count / 2] }
    print(
        String(
            format: "bare min %.0f median %.0f | full min %.0f median %.0f | difference min %.0f median %.0f ns per call",
            bareTimes[0], median(bareTimes), fullTimes[0], median(fullTimes), fullTimes[0] - bareTimes[0],
            median(fullTimes) - median(bareTimes)))
} else {
    let client = try makeClient(fullChain: mode == "full")
    let nanoseconds = try await Task.detached {
        for _ in 0..<1_000 { _ = try await client.send(Ping()) }
        return try await perCall(client, calls)
    }.value
    print("\(mode): \(String(format: "%.0f", nanoseconds)) ns per call over \(calls) calls")
}
