import Courier
import CourierConformance
import CourierCurl
import CourierMock
import CourierTestServer
import CourierURLSession
import Foundation
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// The same endpoint over each transport, chosen only by `COURIER_TRANSPORT`.
@Suite("Swapping transports by configuration", .timeLimit(.minutes(1)))
struct TransportSwapTests {
    struct Greeting: Codable, Sendable, Hashable {
        var method: String
        var path: String
        var rawQuery: String
    }

    struct Greet: Endpoint {
        typealias Output = Greeting
        var path: String { "echo/greet" }
        var query: [QueryItem] { [QueryItem("name", "Zoë")] }
    }

    /// Every transport name this build links.
    static var linkedNames: [String] {
        #if AsyncHTTPClient
            ["mock", "urlsession", "curl", "ahc"]
        #else
            ["mock", "urlsession", "curl"]
        #endif
    }

    @Test("the same call decodes the same result over each transport", arguments: linkedNames)
    func sameResult(transport: String) async throws {
        try await withServer { server in
            let mock = MockTransport()
            mock.stub(
                .get, "/echo/greet", query: ["name": "Zoë"], .json(Greeting(method: "GET", path: "/echo/greet", rawQuery: "name=Zo%C3%AB")))
            #if AsyncHTTPClient
                let registry = TransportRegistry([.mock(mock), .urlSession(), .curl(), .asyncHTTPClient()])
            #else
                let registry = TransportRegistry([.mock(mock), .urlSession(), .curl()])
            #endif
            let configuration = try ClientConfiguration.load(
                environment: ["COURIER_TRANSPORT": transport], defaults: ClientConfiguration(baseURL: server.baseURL)
            )
            let client = try NetworkClient(configuration: configuration, registry: registry)
            #expect(client.transport.name == transport)
            let greeting = try await client.send(Greet())
            #expect(greeting == Greeting(method: "GET", path: "/echo/greet", rawQuery: "name=Zo%C3%AB"))
            #expect(server.requestCount == (transport == "mock" ? 0 : 1))
            await client.shutdown()
        }
    }
}
