import ArgumentParser
import Courier
import CourierCurl
import CourierResilience
import CourierTestServer
import Foundation

/// `courier-bench storm`: a host that fails every call, and what retries make of it with and
/// without the retry budget and the circuit breaker, side by side.
public struct StormCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "storm",
        abstract:
            "Measures a failure storm: the requests a failing host receives per call, with retry alone, with the retry budget, and with the circuit breaker.",
        discussion: """
            The embedded server answers every GET /status/503 with 503. Three clients on the curl transport, each with \
            RetryPolicy (3 attempts, backoff of 1 to 10 ms so the run stays short), make --calls calls each at \
            --concurrency: one whose budget is out of the way (share 1, 1,000 a second over 300 s), one with the default \
            RetryBudget (20% plus 10 a second over 10 s), and one with the budget and the default CircuitBreakerPolicy. \
            Each reports the requests the server received per call made, and how long the calls took.
            """)

    @Option(help: "Calls per client.")
    var calls: Int = 3000
    @Option(help: "Callers in flight at once (closed loop).")
    var concurrency: Int = 16

    public init() {}

    struct Failing: Endpoint {
        typealias Output = Data
        var path: String { "status/503" }
    }

    public func run() async throws {
        guard (100...1_000_000).contains(calls) else { throw ValidationError("--calls must be 100 to 1000000") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 256") }
        let server = try await TestServer.start()
        var base = ClientConfiguration(baseURL: server.baseURL, transport: "curl")
        base.exportsMetrics = false
        var retry = RetryPolicy()
        retry.baseDelay = .milliseconds(1)
        retry.maxDelay = .milliseconds(10)
        base.retry = retry
        var unbounded = base
        unbounded.resilience.retryBudget.share = 1
        unbounded.resilience.retryBudget.minPerSecond = 1000
        unbounded.resilience.retryBudget.window = .seconds(300)
        var breaker = base
        breaker.resilience.circuitBreaker = CircuitBreakerPolicy()
        let registry = TransportRegistry([.curl()])
        let clients = [
            ("retry, no budget", try NetworkClient(configuration: unbounded, registry: registry)),
            ("retry + budget", try NetworkClient(configuration: base, registry: registry)),
            ("+ circuit breaker", try NetworkClient(configuration: breaker, registry: registry)),
        ]
        print("GET /status/503 (every answer fails); \(calls) calls per client, concurrency \(concurrency), curl, HTTP/1.1")
        print("client              calls   requests  per call   seconds")
        for (name, client) in clients {
            let before = server.requestCount
            let started = ContinuousClock.now
            let tally = await LoadLoop.run(concurrency: concurrency, for: .seconds(600), maxRequests: calls) {
                do {
                    _ = try await client.send(Failing())
                    return .failure("GET /status/503 succeeded")
                } catch let error as NetworkError where error.kind == .httpStatus || error.kind == .circuitOpen {
                    return .success(bytes: 0, httpVersion: nil)
                } catch {
                    return .failure("\(error)")
                }
            }
            let seconds = started.duration(to: .now)
            if tally.failed > 0 {
                throw ValidationError("\(name): \(tally.failed) calls failed otherwise, the first: \(tally.firstError ?? "?")")
            }
            let received = server.requestCount - before
            print(
                name.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(
                        format: "%-8d%-10d%-11.2f%.2f", tally.completed, received, Double(received) / Double(max(1, tally.completed)),
                        Double(seconds.components.seconds) + Double(seconds.components.attoseconds) / 1e18))
            await client.shutdown()
        }
        await server.shutdown()
    }
}
