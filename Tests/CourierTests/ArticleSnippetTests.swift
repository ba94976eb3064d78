import Configuration
import Courier
import CourierConfiguration
import CourierMock
import CourierServiceLifecycle
import Logging
import ServiceLifecycle
import Testing
import UnixSignals

/// The Swift in the DocC article "Running in a service" (`RunningInAService.md`), compiled here so
/// that it cannot drift from the API. The first is run against an environment of the test's own.
@Suite("The DocC article's snippets")
struct ArticleSnippetTests {
    @Test("Running in a service: a configuration from a scoped reader, with defaults from code")
    func configurationFromReader() async throws {
        let config = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: ["COURIER_TIMEOUTS_REQUEST": "12", "COURIER_RETRY_MAX_ATTEMPTS": "2"])
        ])
        let configuration = try ClientConfiguration(
            reader: config.scoped(to: "courier"), defaults: ClientConfiguration(baseURL: "https://payments.internal"))
        #expect(configuration.baseURL == "https://payments.internal")
        #expect(configuration.requestTimeout == .seconds(12))
        #expect(configuration.retry?.maxAttempts == 2)
    }

    /// The article's service group (built, not run: running it would wait for a signal).
    func serviceGroup(client: NetworkClient, server: some Service, logger: Logger) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: [.init(service: NetworkClientService(client, gracePeriod: .seconds(10))), .init(service: server)],
                gracefulShutdownSignals: [.sigterm],
                logger: logger))
    }
}
