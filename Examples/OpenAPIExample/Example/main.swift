// The OpenAPI example: a client that swift-openapi-generator made from openapi.yaml (the
// InventoryClient target; scripts/generate-openapi.sh remakes it), run over Courier through
// CourierClientTransport. It starts the loopback server, which implements the same document, and
// calls every operation over each transport this program links (or only the one named by
// COURIER_TRANSPORT): path and query parameters, a JSON body, a documented error, a streamed
// download and a streamed upload. Exit status 0 when every call behaved as the document says.
import Courier
import CourierCurl
import CourierMock
import CourierOpenAPI
import CourierTestServer
import CourierTestSupport
import CourierURLSession
import Foundation
import HTTPTypes
import InventoryClient
import OpenAPIRuntime

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// Every team's calls carry the operation they run, from the operation's id.
let operationHeader = try HeaderRule(
    team: "inventory", headers: ["X-Operation": .computed { _, context in context.endpointName }, "X-Team": .fixed("inventory")])

/// The streamed bodies' size: more than any transport buffers, less than the mock records.
let streamedBytes = 768 * 1024

/// Calls every operation once through `inventory`; returns whether each behaved as documented.
func runOperations(_ name: String, _ inventory: Client) async -> Bool {
    var ok = true
    func check(_ label: String, _ condition: Bool, _ detail: @autoclosure () -> String) {
        print("  [\(name)] \(label.padding(toLength: 16, withPad: " ", startingAt: 0)) \(condition ? "→" : "✗") \(detail())")
        ok = ok && condition
    }
    do {
        // Query parameters; a JSON array back.
        let items = try await inventory.listItems(query: .init(limit: 3, tag: "even")).ok.body.json
        check("listItems", items.map(\.id) == [2, 4, 6], "\(items.map(\.name))")

        // A JSON body; 201 with the stored item.
        let created = try await inventory.createItem(body: .json(.init(name: "lamp", tags: ["new"]))).created.body.json
        check("createItem", created.id == 101 && created.name == "lamp", "#\(created.id) \(created.name) \(created.tags)")

        // A path parameter, then the documented error response.
        let item = try await inventory.getItem(path: .init(itemID: 7)).ok.body.json
        check("getItem", item.name == "item-7", "\(item.name) \(item.tags)")
        switch try await inventory.getItem(path: .init(itemID: 4242)) {
        case .notFound(let missing):
            let problem = try missing.body.json
            check("getItem 404", problem.code == "not_found", "\(problem.code): \(problem.message)")
        default:
            check("getItem 404", false, "expected the documented 404")
        }

        // A streamed download: read as it arrives, checked end to end.
        let download = try await inventory.downloadContent(path: .init(itemID: 7), query: .init(bytes: Int64(streamedBytes)))
        var checksum = PatternBody.Checksum()
        var received = 0
        for try await chunk in try download.ok.body.binary {
            checksum.update(chunk)
            received += chunk.count
        }
        check(
            "downloadContent", received == streamedBytes && checksum.value == PatternBody.crc32(byteCount: streamedBytes),
            "\(received) bytes streamed, CRC-32 \(String(checksum.value, radix: 16))")

        // A streamed upload: produced chunk by chunk while it is sent.
        let chunks = PatternBody.Chunks(byteCount: streamedBytes)
        let upload = HTTPBody(chunks, length: .known(Int64(streamedBytes)), iterationBehavior: .single)
        let digest = try await inventory.uploadContent(path: .init(itemID: 7), body: .binary(upload)).ok.body.json
        check(
            "uploadContent", digest.bodyLength == streamedBytes && digest.crc32 == Int64(PatternBody.crc32(byteCount: streamedBytes)),
            "\(digest.bodyLength) bytes arrived intact")
    } catch {
        print("  [\(name)] ✗ \(error)")
        ok = false
    }
    return ok
}

/// A mock transport that answers as the loopback server does, without I/O.
func inventoryMock() -> MockTransport {
    var configuration = MockTransport.Configuration()
    configuration.maxRecordedBodyBytes = 2 * streamedBytes
    let mock = MockTransport(configuration: configuration)
    mock.stub(nil, "/inventory/**") { request in
        let answer = InventoryService.answer(
            method: request.head.method.rawValue, path: request.head.path ?? "/", body: request.body ?? Data())
        return .status(answer.status, headers: RequestHeaders(answer.headers), body: answer.body)
    }
    return mock
}

let server = try await TestServer.start()
#if AsyncHTTPClient
    let names = ["curl", "urlsession", "ahc", "mock"]
#else
    let names = ["curl", "urlsession", "mock"]
#endif
let chosen = ProcessInfo.processInfo.environment["COURIER_TRANSPORT"].map { [$0] } ?? names
var allPassed = true
for name in chosen {
    var configuration = ClientConfiguration(baseURL: server.baseURL, transport: name)
    configuration.headerRules = [operationHeader]
    let transport: any Transport
    #if AsyncHTTPClient
        let registry = TransportRegistry([.curl(), .urlSession(), .asyncHTTPClient(), .mock(inventoryMock())])
    #else
        let registry = TransportRegistry([.curl(), .urlSession(), .mock(inventoryMock())])
    #endif
    transport = try registry.makeTransport(for: configuration)
    let client = try NetworkClient(configuration: configuration, transport: transport)
    guard let serverURL = URL(string: server.baseURL + InventoryService.prefix) else {
        print("✗ the server URL \(server.baseURL) is not a URL")
        exit(1)
    }
    let inventory = Client(serverURL: serverURL, transport: CourierClientTransport(client: client, team: "inventory"))
    print("\(name):")
    let passed = await runOperations(name, inventory)
    allPassed = allPassed && passed
    await client.shutdown()
}
await server.shutdown()
print(allPassed ? "every operation behaved as the document says" : "some operations failed")
exit(allPassed ? 0 : 1)
