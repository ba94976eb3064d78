import Configuration
import Courier
import CourierCache
import CourierConfiguration
import CourierMock
import CourierServiceLifecycle
import Foundation
import HTTPTypes
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

    // "Caching responses" (`CourierCache.md`, the `CourierCache` catalog).

    struct Catalogue: Decodable, Sendable {}

    struct GetCatalogue: Endpoint {
        typealias Output = Catalogue
        var path: String { "catalogue" }
        // A stale catalogue beats an error page while the catalogue service restarts.
        var cachePolicy: CachePolicy? { .staleIfError(maxStale: .seconds(600)) }
    }

    @Test("Caching responses: the cache in code and in one configuration key, and a call's policy")
    func caching() throws {
        var configuration = ClientConfiguration(baseURL: "https://catalogue.internal")
        configuration.cache = .memory(maxBytes: 32 << 20)
        #expect((configuration.cache?.store as? MemoryCacheStore)?.maxBytes == 32 << 20)
        let loaded = try ClientConfiguration().applyingJSON(Data(#"{ "cache": { "memoryBytes": 33554432 } }"#.utf8), source: "article")
        #expect((loaded.cache?.store as? MemoryCacheStore)?.maxBytes == 33_554_432)
        #expect(GetCatalogue().cachePolicy == .staleIfError(maxStale: .seconds(600)))
    }

    // "Progress" (`Progress.md`).

    struct Upload: Endpoint {
        typealias Output = Data
        let archive: URL
        var progress: ProgressReporter?
        var path: String { "uploads" }
        var method: HTTPRequest.Method { .post }
        var body: RequestBody? { .file(archive) }
        var decoder: ResponseDecoder<Data> { .data }
    }

    static let statusLine = Locked("")

    @Test("Progress: an upload's reports to a main-actor handler and as a sequence")
    func progress() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-article-\(UUID().uuidString)")
        try Data(repeating: 1, count: 4096).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let mock = MockTransport()
        mock.stub(.post, "/uploads", .text("ok"))
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://files.internal", transport: "mock"), transport: mock)

        let shown = ProgressReporter { @MainActor update in
            Self.statusLine.withLock { $0 = "\(update.bytesSent) of \(update.expectedBytesSent ?? 0) bytes sent" }
        }
        _ = try await client.send(Upload(archive: file, progress: shown))
        #expect(await waitUntil { Self.statusLine.withLock { $0 } == "4096 of 4096 bytes sent" })

        let reporter = ProgressReporter()
        async let receipt = client.send(Upload(archive: file, progress: reporter))
        var last: TransferProgress?
        for await update in reporter.updates { last = update }
        _ = try await receipt
        #expect(last?.fractionSent == 1 && last?.isFinished == true)
        await client.shutdown()
    }
}
