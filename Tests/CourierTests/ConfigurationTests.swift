import Courier
import CourierCache
import CourierMock
import Foundation
import Testing

@Suite("Configuration and transport selection")
struct ConfigurationTests {
    let registry = TransportRegistry([.mock(MockTransport())])

    func writeFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-config-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("COURIER_TRANSPORT selects the transport")
    func environmentSelects() throws {
        let configuration = try ClientConfiguration.load(
            environment: ["COURIER_TRANSPORT": "MOCK"], defaults: ClientConfiguration(baseURL: "https://x"))
        #expect(configuration.transport == "mock")
        let client = try NetworkClient(configuration: configuration, registry: registry)
        #expect(client.transport.name == "mock")
    }

    @Test("the file is read, and the environment wins over it")
    func fileThenEnvironment() throws {
        let path = try writeFile(
            #"{"transport":"urlsession","baseURL":"https://file.test","timeouts":{"request":2.5,"connect":1},"maxResponseBytes":1000,"maxRedirects":3,"secretHeaders":["X-Key"],"headers":{"X-Team":"t"}}"#
        )
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path])
        #expect(fromFile.transport == "urlsession")
        #expect(fromFile.baseURL == "https://file.test")
        #expect(fromFile.requestTimeout == .milliseconds(2500))
        #expect(fromFile.connectTimeout == .seconds(1))
        #expect(fromFile.maxResponseBytes == 1000)
        #expect(fromFile.maxRedirects == 3)
        #expect(fromFile.secretHeaderNames == ["x-key"])
        #expect(fromFile.defaultHeaders["x-team"] == "t")
        let overridden = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path, "COURIER_TRANSPORT": "mock"])
        #expect(overridden.transport == "mock")
    }

    @Test("an unknown transport name names the key and the allowed values")
    func unknownTransport() throws {
        let configuration = try ClientConfiguration.load(environment: ["COURIER_TRANSPORT": "carrier-pigeon"])
        do {
            _ = try NetworkClient(configuration: configuration, registry: registry)
            Issue.record("must fail")
        } catch let error as ConfigurationError {
            #expect(error.key == "transport")
            #expect(error.value == "carrier-pigeon")
            #expect(error.allowed.contains("mock"))
            #expect(error.description.contains("carrier-pigeon"))
        }
    }

    @Test("a known transport that is not linked says so")
    func notLinked() throws {
        let configuration = try ClientConfiguration.load(environment: ["COURIER_TRANSPORT": "curl"])
        do {
            _ = try NetworkClient(configuration: configuration, registry: registry)
            Issue.record("must fail")
        } catch let error as ConfigurationError {
            #expect(error.allowed.contains("does not link it"))
        }
    }

    @Test(
        "malformed files and out-of-range values name the key",
        arguments: [
            ("not json at all", "(file)"),
            (#"["a list"]"#, "(file)"),
            (#"{"transprot":"mock"}"#, "transprot"),
            (#"{"timeouts":{"request":"soon"}}"#, "timeouts.request"),
            (#"{"timeouts":{"reqest":1}}"#, "timeouts.reqest"),
            (#"{"timeouts":{"request":-1}}"#, "timeouts.request"),
            (#"{"timeouts":{"connect":0}}"#, "timeouts.connect"),
            (#"{"maxRedirects":500}"#, "maxRedirects"),
            (#"{"maxRedirects":1.5}"#, "maxRedirects"),
            (#"{"maxResponseBytes":0}"#, "maxResponseBytes"),
            (#"{"headers":{"Bad Name":"x"}}"#, "headers.Bad Name"),
            (#"{"headers":{"X-Ok":"a\r\nb"}}"#, "headers.X-Ok"),
            (#"{"queue":{"maxConcurent":4}}"#, "queue.maxConcurent"),
            (#"{"queue":{"maxConcurrent":0}}"#, "queue.maxConcurrent"),
            (#"{"queue":{"maxWaiting":2.5}}"#, "queue.maxWaiting"),
            (#"{"httpVersion":"3"}"#, "httpVersion"),
            (#"{"connections":{"maxTotl":4}}"#, "connections.maxTotl"),
            (#"{"connections":{"maxTotal":0}}"#, "connections.maxTotal"),
            (#"{"connections":{"maxPerHost":1.5}}"#, "connections.maxPerHost"),
            (#"{"timeouts":{"stall":0}}"#, "timeouts.stall"),
            (#"{"tls":{"caFil":"x"}}"#, "tls.caFil"),
            (#"{"tls":{"caFile":"/nonexistent/ca.pem"}}"#, "tls.caFile"),
            (#"{"tls":{"caPEM":"not a certificate"}}"#, "tls.caPEM"),
            (#"{"tls":{"pinnedPublicKey":"md5//abc"}}"#, "tls.pinnedPublicKey"),
            (#"{"cache":{"memoryByte":1}}"#, "cache.memoryByte"),
            (#"{"cache":{"memoryBytes":0}}"#, "cache.memoryBytes"),
            (#"{"cache":{"maxEntries":1.5}}"#, "cache.maxEntries"),
            (#"{"cache":{"policy":"sometimes"}}"#, "cache.policy"),
            (#"{"cache":{"maxStale":30}}"#, "cache.maxStale"),
            (#"{"cache":{"policy":"staleIfError","maxStale":-1}}"#, "cache.maxStale"),
            (#"{"cache":{"maxBytes":1000}}"#, "cache.maxBytes"),
            (#"{"cache":{"directory":"/tmp/x","memoryBytes":1000}}"#, "cache.directory"),
            (#"{"cache":{"directory":"/proc/self/no/such"}}"#, "cache.directory"),
            (#"{"tls":{"clientKeyFile":"/etc/hostname"}}"#, "tls.clientCertificateFile"),
        ]
    )
    func badFiles(text: String, key: String) throws {
        let path = try writeFile(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path])
            Issue.record("must fail")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(error.source == path)
        }
    }

    @Test("a missing file and an empty transport variable are errors")
    func missingInputs() {
        #expect(throws: ConfigurationError.self) {
            try ClientConfiguration.load(environment: ["COURIER_CONFIG": "/nonexistent/courier.json"])
        }
        #expect(throws: ConfigurationError.self) { try ClientConfiguration.load(environment: ["COURIER_TRANSPORT": "  "]) }
    }

    @Test("values set in code are range-checked when the client is built")
    func codeValues() {
        var configuration = ClientConfiguration(baseURL: "https://x", transport: "mock")
        configuration.requestTimeout = .zero
        #expect(throws: ConfigurationError.self) { try NetworkClient(configuration: configuration, transport: MockTransport()) }
        configuration.requestTimeout = .seconds(1)
        configuration.maxRedirects = -1
        #expect(throws: ConfigurationError.self) { try NetworkClient(configuration: configuration, transport: MockTransport()) }
    }

    @Test("the cache key turns the response cache on: in memory by default, on disk with a directory, with a policy")
    func cacheFromFile() throws {
        func load(_ text: String) throws -> ClientConfiguration {
            let path = try writeFile(text)
            defer { try? FileManager.default.removeItem(atPath: path) }
            return try ClientConfiguration.load(environment: ["COURIER_CONFIG": path])
        }
        #expect(try load(#"{"transport":"mock"}"#).cache == nil, "no key, no cache")
        let memory = try load(#"{"cache":{}}"#)
        let store = try #require(memory.cache?.store as? MemoryCacheStore)
        #expect(store.maxBytes == 64 << 20 && store.maxEntries == 10_000)
        #expect(memory.cachePolicy == .useProtocol)
        let sized = try load(#"{"cache":{"memoryBytes":1000,"maxEntries":5,"maxEntryBytes":100,"policy":"revalidateAlways"}}"#)
        #expect((sized.cache?.store as? MemoryCacheStore)?.maxBytes == 1000)
        #expect(sized.cache?.maxEntryBytes == 100)
        #expect(sized.cachePolicy == .revalidateAlways)
        let directory = NSTemporaryDirectory() + "courier-config-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = try load(#"{"cache":{"directory":"\#(directory)","maxBytes":4096,"policy":"staleIfError","maxStale":30}}"#)
        #expect((disk.cache?.store as? DiskCacheStore)?.directory == directory)
        #expect((disk.cache?.store as? DiskCacheStore)?.maxBytes == 4096)
        #expect(disk.cachePolicy == .staleIfError(maxStale: .seconds(30)))
        #expect(try load(#"{"cache":{"policy":"staleIfError"}}"#).cachePolicy == .staleIfError(maxStale: .seconds(300)))
    }

    @Test("the queue key gives the client a default queue with those limits")
    func queueFromFile() throws {
        let path = try writeFile(
            #"{"transport":"mock","queue":{"maxConcurrent":4,"maxConcurrentPerHost":2,"maxWaiting":10,"deduplicates":false}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path])
        let client = try NetworkClient(configuration: configuration, transport: MockTransport())
        let limits = try #require(client.queue?.limits)
        #expect(limits.maxConcurrent == 4 && limits.maxConcurrentPerHost == 2 && limits.maxWaiting == 10 && !limits.deduplicates)
        let none = try NetworkClient(configuration: ClientConfiguration(baseURL: nil, transport: "mock"), transport: MockTransport())
        #expect(none.queue == nil, "no default queue unless configured")
    }

    @Test("transport settings load from the file: HTTP version, connection limits, stall limit and TLS")
    func transportSettings() throws {
        let path = try writeFile(
            #"{"httpVersion":"1.1","connections":{"maxTotal":32,"maxPerHost":4},"timeouts":{"stall":5},"tls":{"caFile":"/etc/hostname","pinnedPublicKey":"sha256//RjGONrTSIIKbmCXMZVkAuHeLkGKEkQLvBvbUMKswM4Q="}}"#
        )
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path])
        #expect(configuration.httpVersion == .http1_1)
        #expect(configuration.maxConnections == 32)
        #expect(configuration.maxConnectionsPerHost == 4)
        #expect(configuration.stallTimeout == .seconds(5))
        #expect(configuration.tls.caFile == "/etc/hostname")
        #expect(configuration.tls.setKeys == ["tls.caFile", "tls.pinnedPublicKey"])
    }

    @Test("transport settings set in code are checked when the client is built")
    func transportSettingsInCode() throws {
        var configuration = ClientConfiguration(baseURL: "https://x", transport: "mock")
        configuration.maxConnectionsPerHost = 0
        #expect(throws: ConfigurationError.self) { try NetworkClient(configuration: configuration, registry: registry) }
        configuration.maxConnectionsPerHost = 8
        configuration.stallTimeout = .milliseconds(10)
        do {
            _ = try NetworkClient(configuration: configuration, registry: registry)
            Issue.record("must fail")
        } catch let error as ConfigurationError {
            #expect(error.key == "timeouts.stall")
        }
    }
}
