import Courier
import CourierConformance
import CourierCurl
import CourierMock
import CourierTestServer
import CourierTestSupport
import CourierURLSession
import Foundation
import Logging
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// A configuration that names no transport gets the fastest linked one a server cannot crash, and
/// the one-off calls (`NetworkClient(baseURL:)`, `get`, `post`) run on it through the whole chain.
@Suite("The default transport and one-off calls")
struct DefaultTransportTests {
    @Test("the linked transports are found by the core, in the order of preference")
    func linkedTransports() {
        #if AsyncHTTPClient
            #expect(TransportRegistry.linked.names == ["curl", "ahc", "urlsession"])
        #else
            #expect(TransportRegistry.linked.names == ["curl", "urlsession"])
        #endif
        #expect(TransportRegistry.linked.defaultName == "curl")
    }

    @Test("the mangled names the core looks up are the adapters' LinkedEntry types")
    func mangledNames() {
        var expected = [_mangledTypeName(CourierCurl.LinkedEntry.self), _mangledTypeName(CourierURLSession.LinkedEntry.self)]
        #if AsyncHTTPClient
            expected.insert(_mangledTypeName(CourierAsyncHTTPClient.LinkedEntry.self), at: 1)
        #endif
        // `$s` prefixes a full symbol; the runtime lookup takes the bare type name.
        let lookedUp = expected.map { $0.map { $0.hasPrefix("$s") ? String($0.dropFirst(2)) : $0 } }
        for name in lookedUp {
            #expect(name.map { _typeByName($0) != nil } == true, "\(name ?? "nil") does not resolve")
        }
        #expect(TransportRegistry.linked.names.count == lookedUp.count)
        // The table the core looks up names exactly these types.
        #expect(lookedUp.allSatisfy { name in TransportRegistry.preferred.contains { $0.linkedType == name } })
    }

    @Test(
        "with no name, each registry picks curl, then ahc, then urlsession, then its first entry",
        arguments: [
            (["urlsession", "curl"], "curl"), (["urlsession"], "urlsession"), (["mock", "urlsession"], "urlsession"),
            (["mock"], "mock"), (["urlsession", "ahc"], "ahc"),
        ])
    func choice(names: [String], chosen: String) async throws {
        let entries = names.map { name in
            TransportRegistry.Entry(name: name) { _ in
                var mock = MockTransport.Configuration()
                mock.name = name
                return MockTransport(configuration: mock)
            }
        }
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "http://127.0.0.1:1"), registry: TransportRegistry(entries))
        #expect(client.transport.name == chosen)
        #expect(client.configuration.transport == nil)
        await client.shutdown()
    }

    @Test("an empty registry and no name is a configuration error naming the key")
    func nothingLinked() {
        #expect {
            try NetworkClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:1"), registry: TransportRegistry([]))
        } throws: { error in
            (error as? ConfigurationError)?.key == "transport" && (error as? ConfigurationError)?.allowed.contains("CourierCurl") == true
        }
    }

    @Test("the choice is logged once at debug")
    func choiceLogged() async throws {
        let lines = Locked<[String]>([])
        var configuration = ClientConfiguration(baseURL: "http://127.0.0.1:1")
        configuration.logger = Logger(label: "test") { _ in RecordingLogHandler(lines: lines) }
        configuration.logger.logLevel = .debug
        let client = try NetworkClient(configuration: configuration)
        #expect(lines.withLock { $0.filter { $0.hasPrefix("courier.transport.chosen") } } == ["courier.transport.chosen curl"])
        await client.shutdown()
    }

    @Test("a GET decodes JSON in one line, through the chain's default headers, over curl by default")
    func oneOffGet() async throws {
        try await withServer { server in
            var configuration = ClientConfiguration(baseURL: server.baseURL)
            configuration.defaultHeaders = ["X-Team": "payments"]
            let client = try NetworkClient(configuration: configuration)
            #expect(client.transport.name == "curl")
            let echo = try await client.get("echo/a b", query: [QueryItem("q", "1 2")], headers: ["X-Call": "one"], as: EchoResponse.self)
            #expect(echo.method == "GET")
            #expect(echo.path == "/echo/a%20b")
            #expect(echo.query == [["q", "1 2"]])
            #expect(echo.header("X-Team") == "payments" && echo.header("X-Call") == "one")
            let text = try await client.get("bytes/3", as: Data.self)
            #expect(text.count == 3)
            await client.shutdown()
        }
    }

    @Test("a POST sends its JSON body with its content type; a status error is a NetworkError")
    func oneOffPost() async throws {
        struct NewUser: Codable, Sendable, Equatable { var name: String }
        try await withServer { server in
            let client = try NetworkClient(baseURL: server.baseURL)
            let echo = try await client.post("echo", json: NewUser(name: "Ada"), as: EchoResponse.self)
            #expect(echo.method == "POST")
            #expect(echo.header("Content-Type") == "application/json")
            #expect(try JSONDecoder().decode(NewUser.self, from: Data(echo.body.utf8)) == NewUser(name: "Ada"))
            await expectNetworkError(.httpStatus) { _ = try await client.get("status/404", as: Data.self) }
            await client.shutdown()
        }
    }
}

/// Records each log line as its message followed by its `courier.transport` metadata.
struct RecordingLogHandler: LogHandler {
    let lines: Locked<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let transport = event.metadata?["courier.transport"].map { " \($0)" } ?? ""
        lines.withLock { $0.append("\(event.message)\(transport)") }
    }
}
