// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import CourierCache
import CourierTracing
import CourierAlerts
import Logging

func middleware(logger: Logger, tokens: some CredentialProvider) throws -> NetworkClient {
    // README block 4
    var configuration = try ClientConfiguration.load(defaults: ClientConfiguration(baseURL: "https://api.example.com"))
    configuration.headerRules = [try HeaderRule(team: "payments", headers: ["X-Team": .fixed("payments"), "X-Request-ID": .requestID])]
    configuration.retry = RetryPolicy()            // 3 attempts, full-jitter backoff, Retry-After
    configuration.cache = .memory()                // HTTP caching for GET and HEAD
    let alerts = try FailureAlerts(
        rules: [AlertRule(name: "payments-down", scope: .team("payments"), trigger: .consecutiveFailures(5))],
        sink: LogAlertSink(logger: logger))
    let client = try NetworkClient(
        configuration: configuration,
        middleware: [TracingMiddleware(), AuthRefreshMiddleware(provider: tokens)],   // once per call
        observers: [alerts])                                                         // swift-metrics export is on by default
    // README end
    return client
}
