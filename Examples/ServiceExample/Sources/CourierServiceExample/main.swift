// A small Hummingbird 2 service whose handlers call two downstream APIs through Courier:
// configured through swift-configuration, run by swift-service-lifecycle, exporting Courier's
// metrics on /metrics through swift-prometheus and logging through swift-log. See README.md.
import Courier
import CourierCurl
import CourierServiceLifecycle
import CourierTestServer
import CourierURLSession
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus

let config = Settings.reader()
let settings: Settings
do {
    settings = try Settings(reader: config)
} catch {
    FileHandle.standardError.write(Data("courier-service-example: \(error)\n".utf8))
    exit(2)
}

let level = settings.logLevel
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
let logger = Logger(label: "courier-service-example")

// The downstream APIs: the configured URL, or the loopback test server in this process.
let embedded: TestServer? = settings.downstreamURL == nil ? try await TestServer.start() : nil
let downstream = settings.downstreamURL ?? embedded?.baseURL ?? ""

let client: NetworkClient
do {
    let configuration = try settings.clientConfiguration(reader: config, baseURL: downstream, logger: logger)
    client = try NetworkClient(configuration: configuration, registry: TransportRegistry([.curl(), .urlSession()]))
} catch {
    logger.critical("courier-service-example: \(error)")
    await embedded?.shutdown()
    exit(2)
}
// The Courier settings in effect, logged once at start (smoke-test.sh checks its COURIER_* variables here).
do {
    let effective = client.configuration
    let timeout = effective.requestTimeout.components
    let seconds = Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18
    let version = effective.httpVersion?.description ?? "default"
    logger.info(
        "courier configuration",
        metadata: [
            "courier.timeouts.request": "\(seconds)", "courier.failureLogLevel": "\(effective.failureLogLevel)",
            "courier.httpVersion": "\(version)",
        ])
}
let inventory = try RequestQueue(name: "inventory", limits: .init(maxConcurrent: 4, maxConcurrentPerHost: 4))

let app = Application(
    router: makeRouter(client: client, inventory: inventory, registry: registry),
    configuration: ApplicationConfiguration(reader: config.scoped(to: "http")),
    // The client stops after the server: running calls get the grace period, late ones are refused.
    services: [NetworkClientService(client, gracePeriod: settings.gracePeriod)],
    onServerRunning: { channel in
        logger.info(
            "listening",
            metadata: [
                "port": "\(channel.localAddress?.port ?? 0)", "transport": "\(client.transport.name)", "downstream": "\(downstream)",
            ])
    },
    logger: logger
)
try await app.runService()
await embedded?.shutdown()
logger.info("stopped")
