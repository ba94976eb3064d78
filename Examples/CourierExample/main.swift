// The example service: starts the loopback server, then makes the same three calls over each
// transport it links (or only the one named by COURIER_TRANSPORT), printing each response and
// its timing.
import Courier
import CourierAlerts
import CourierCurl
import CourierMock
import CourierTestServer
import CourierTracing
import CourierURLSession
import Foundation

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

func milliseconds(_ duration: Duration?) -> String {
    guard let duration else { return "n/a" }
    let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return String(format: "%.2f ms", value)
}

func describe(_ metrics: RequestMetrics?) -> String {
    guard let metrics else { return "" }
    return "total \(milliseconds(metrics.total)), network \(milliseconds(metrics.network)), decode \(milliseconds(metrics.decode))"
}

/// Runs the example's calls through one client; returns whether every call behaved as expected.
func runCalls(transport name: String, client: NetworkClient) async -> Bool {
    var ok = true

    // 1. A BaseAPI subclass with a completion handler.
    let search = SearchAPI(client: client, term: "blue shoes & socks")
    let result: Result<EchoSummary, NetworkError> = await withCheckedContinuation { continuation in
        do throws(NetworkError) {
            try search.start { continuation.resume(returning: $0) }
        } catch {
            continuation.resume(returning: .failure(error))
        }
    }
    switch result {
    case .success(let echo):
        print("  [\(name)] search       → \(search.responseHead?.status.code ?? 0) \(echo)  [\(describe(search.metrics))]")
    case .failure(let error):
        print("  [\(name)] search       ✗ \(error)")
        ok = false
    }

    // 2. A BaseAPI subclass with async/await.
    let create = CreateOrderAPI(client: client, order: .init(sku: "SKU-42", quantity: 3))
    do {
        let echo = try await create.response()
        print("  [\(name)] create order → \(create.responseHead?.status.code ?? 0) \(echo)  [\(describe(create.metrics))]")
    } catch {
        print("  [\(name)] create order ✗ \(error)")
        ok = false
    }

    // 3. A value-type Endpoint whose server answers 404: the typed error carries the problem body.
    do {
        _ = try await client.send(MissingItem())
        print("  [\(name)] missing item ✗ expected a 404")
        ok = false
    } catch let error as NetworkError {
        let problem = error.errorBody(as: MissingItem.Problem.self)?.error ?? "?"
        print("  [\(name)] missing item → \(error.kind) \(error.status ?? 0), problem: \"\(problem)\"  [\(describe(error.metrics))]")
        ok = ok && error.kind == .httpStatus && problem == "no such item"
    } catch {
        print("  [\(name)] missing item ✗ \(error)")
        ok = false
    }

    // 4. Retry (configured below): a server that keeps answering 503 is tried three times.
    do {
        _ = try await client.send(AlwaysUnavailable())
        print("  [\(name)] unavailable  ✗ expected a 503")
        ok = false
    } catch let error as NetworkError {
        let attempts = error.metrics?.attempts ?? 0
        print("  [\(name)] unavailable  → \(error.kind) \(error.status ?? 0) after \(attempts) attempts  [\(describe(error.metrics))]")
        ok = ok && error.status == 503 && attempts == 3
    } catch {
        print("  [\(name)] unavailable  ✗ \(error)")
        ok = false
    }
    return ok
}

/// The middleware every team shares, set once for the client (see README "Middleware").
func withSharedMiddleware(_ configuration: ClientConfiguration) throws -> ClientConfiguration {
    var configuration = configuration
    configuration.headerRules = [
        try HeaderRule(team: "discovery", headers: ["X-Team": .fixed("discovery")]),
        try HeaderRule(headers: ["X-Request-ID": .requestID]),
    ]
    var retry = RetryPolicy()
    retry.baseDelay = .milliseconds(20)
    configuration.retry = retry
    return configuration
}

let server = try await TestServer.start()
print("Courier example: loopback server at \(server.baseURL)")
#if AsyncHTTPClient
    let registry = TransportRegistry([.curl(), .urlSession(), .asyncHTTPClient(), .mock(makeScriptedMock())])
#else
    let registry = TransportRegistry([.curl(), .urlSession(), .mock(makeScriptedMock())])
#endif
var allPassed = true
do {
    let configuration = try ClientConfiguration.load(defaults: ClientConfiguration(baseURL: server.baseURL))
    let chosen = ProcessInfo.processInfo.environment[ClientConfiguration.transportVariable] != nil
    let names = chosen ? [configuration.transport ?? ""] : registry.names
    for name in names {
        var perTransport = try withSharedMiddleware(configuration)
        perTransport.transport = name
        let alerts = try FailureAlerts(
            rules: [AlertRule(name: "unavailable", scope: .eachEndpoint, trigger: .consecutiveFailures(1))],
            sink: ClosureAlertSink { alert in
                print("  [\(name)] alert \(alert.kind): \(alert.rule) on \(alert.endpoint), last error \(alert.lastError ?? "-")")
            })
        let client = try NetworkClient(
            configuration: perTransport, registry: registry, middleware: [TracingMiddleware()], observers: [alerts])
        print("transport \(name):")
        allPassed = await runCalls(transport: name, client: client) && allPassed
        allPassed = await runQueueCalls(transport: name, client: client) && allPassed
        await client.shutdown()
        await alerts.shutdown()
    }
} catch {
    print("error: \(error)")
    allPassed = false
}
await server.shutdown()
print(allPassed ? "all calls behaved as expected" : "some calls failed")
exit(allPassed ? 0 : 1)
