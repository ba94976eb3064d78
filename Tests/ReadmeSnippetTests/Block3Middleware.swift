// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import Logging

func middleware(registry: TransportRegistry, logger: Logger, tokens: some CredentialProvider) throws -> NetworkClient {
    // README block 3
    var configuration = ClientConfiguration(baseURL: "https://api.example.com", transport: "curl")
    configuration.headerRules = [try HeaderRule(team: "payments", headers: ["X-Team": .fixed("payments"), "X-Request-ID": .requestID])]
    configuration.retry = RetryPolicy()  // 3 attempts, full-jitter backoff, Retry-After
    configuration.failureLogLevel = .warning  // successes log at debug, never at info
    let alerts = try FailureAlerts(
        rules: [AlertRule(name: "payments-down", scope: .team("payments"), trigger: .consecutiveFailures(5))],
        sink: LogAlertSink(logger: logger))
    let client = try NetworkClient(
        configuration: configuration, registry: registry,
        middleware: [TracingMiddleware(), AuthRefreshMiddleware(provider: tokens)],  // once per call
        networkMiddleware: [],  // once per attempt
        observers: [alerts])  // MetricsExport is added by default
    // README end
    return client
}
