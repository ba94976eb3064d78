import Courier
import CourierConformance
import CourierCurl
import CourierMock
import CourierOpenAPI
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import InventoryClient
import MetricsTestKit
import OpenAPIRuntime
import Synchronization
import Testing

/// The generated OpenAPI client (`InventoryClient`, from Examples/OpenAPIExample/openapi.yaml) over
/// `CourierClientTransport`, on every transport against the loopback implementation of the same
/// document, and on the mock: operations, streaming both ways, Courier's chain applied to generated
/// calls, and errors as the runtime expects them.
@Suite("OpenAPI: a generated client over Courier", .timeLimit(.minutes(3)))
struct OpenAPIBridgeTests {
    static let streamedBytes = 3 * PatternBody.blockBytes + 999

    /// The generated client for `server`, through `client`.
    static func inventory(_ server: TestServer, _ client: NetworkClient, team: String? = nil) throws -> Client {
        let url = try #require(URL(string: server.baseURL + InventoryService.prefix))
        return Client(serverURL: url, transport: CourierClientTransport(client: client, team: team))
    }

    /// Every operation once: query, JSON body, path parameter, documented error, streamed download and upload.
    static func runOperations(_ inventory: Client) async throws {
        let items = try await inventory.listItems(query: .init(limit: 2, tag: "odd")).ok.body.json
        #expect(items.map(\.id) == [1, 3])
        let created = try await inventory.createItem(body: .json(.init(name: "desk", tags: ["new"]))).created.body.json
        #expect(created == .init(id: 101, name: "desk", tags: ["new"]))
        let rejected = try await inventory.createItem(body: .json(.init(name: "")))
        #expect(try rejected.badRequest.body.json.code == "invalid_item")
        #expect(try await inventory.getItem(path: .init(itemID: 8)).ok.body.json.name == "item-8")
        let missing = try await inventory.getItem(path: .init(itemID: 999))
        #expect(try missing.notFound.body.json.code == "not_found")

        let download = try await inventory.downloadContent(path: .init(itemID: 1), query: .init(bytes: Int64(streamedBytes)))
        var checksum = PatternBody.Checksum()
        var received = 0
        for try await chunk in try download.ok.body.binary {
            checksum.update(chunk)
            received += chunk.count
        }
        #expect(received == streamedBytes)
        #expect(checksum.value == PatternBody.crc32(byteCount: streamedBytes))

        for length in [HTTPBody.Length.known(Int64(streamedBytes)), .unknown] {
            let upload = HTTPBody(PatternBody.Chunks(byteCount: streamedBytes), length: length, iterationBehavior: .single)
            let digest = try await inventory.uploadContent(path: .init(itemID: 1), body: .binary(upload)).ok.body.json
            #expect(digest.bodyLength == streamedBytes, "\(length)")
            #expect(digest.crc32 == Int64(PatternBody.crc32(byteCount: streamedBytes)), "\(length)")
        }
    }

    @Test("every operation of the generated client over each transport and protocol", arguments: ConformanceTransport.everyProtocol)
    func operations(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            try await Self.runOperations(try Self.inventory(server, client))
            await client.shutdown()
        }
    }

    /// A mock that answers as the loopback server does.
    static func inventoryMock() -> MockTransport {
        let mock = MockTransport()
        mock.stub(nil, "/inventory/**") { request in
            let answer = InventoryService.answer(
                method: request.head.method.rawValue, path: request.head.path ?? "/", body: request.body ?? Data())
            return .status(answer.status, headers: RequestHeaders(answer.headers), body: answer.body)
        }
        return mock
    }

    @Test("every operation of the generated client over the mock")
    func operationsOverMock() async throws {
        let mock = Self.inventoryMock()
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: "http://inventory.test", transport: "mock"), transport: mock)
        let url = try #require(URL(string: "http://inventory.test/inventory"))
        try await Self.runOperations(Client(serverURL: url, transport: CourierClientTransport(client: client)))
        #expect(mock.recordedRequests.contains { $0.path == "/inventory/items/8" })
        await client.shutdown()
    }

    @Test("team header rules, retry and metrics apply to generated calls, named by their operationID")
    func chainApplies() async throws {
        let mock = MockTransport()
        let item = Data(#"{"id":7,"name":"item-7","tags":["odd"]}"#.utf8)
        mock.stub(
            .get, "/inventory/items/7", responses: [.status(503), .status(200, headers: ["Content-Type": "application/json"], body: item)])
        var configuration = ClientConfiguration(baseURL: "http://inventory.test", transport: "mock")
        configuration.headerRules = [
            try HeaderRule(
                team: "stock", headers: ["X-Team": .fixed("stock"), "X-Operation": .computed { _, context in context.endpointName }])
        ]
        var retry = RetryPolicy()
        retry.baseDelay = .milliseconds(1)
        retry.maxDelay = .milliseconds(1)
        configuration.retry = retry
        let metrics = TestMetrics()
        let records = RecordedCalls()
        let client = try NetworkClient(
            configuration: configuration, transport: mock, observers: [records, MetricsExport(factory: metrics)])
        let url = try #require(URL(string: "http://inventory.test/inventory"))
        let inventory = Client(serverURL: url, transport: CourierClientTransport(client: client, team: "stock"))

        let found = try await inventory.getItem(path: .init(itemID: 7)).ok.body.json
        #expect(found.name == "item-7")
        let sent = mock.recordedRequests
        #expect(sent.count == 2, "retried once past the 503")
        let team = try #require(HTTPField.Name("X-Team"))
        let operation = try #require(HTTPField.Name("X-Operation"))
        for request in sent {
            #expect(request.head.headerFields[team] == "stock")
            #expect(request.head.headerFields[operation] == "getItem")
        }
        #expect(records.all.map(\.endpoint) == ["getItem"])
        #expect(records.all.first?.metrics.attempts == 2)
        let timer = try metrics.expectTimer(
            "courier_call_duration", [("endpoint", "getItem"), ("transport", "mock"), ("outcome", "success")])
        #expect(timer.values.count == 1)
        await client.shutdown()
    }

    @Test("a failed call reaches the generated client as a ClientError around the NetworkError")
    func errors() async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let client = try NetworkClient(
            configuration: ClientConfiguration(baseURL: refusing.baseURL, transport: "curl"), registry: TransportRegistry([.curl()]))
        let url = try #require(URL(string: refusing.baseURL + "/inventory"))
        let inventory = Client(serverURL: url, transport: CourierClientTransport(client: client))
        do {
            _ = try await inventory.getItem(path: .init(itemID: 1))
            Issue.record("the call must fail")
        } catch let error as ClientError {
            #expect(error.operationID == "getItem")
            let underlying = try #require(error.underlyingError as? NetworkError)
            #expect(underlying.kind == .connectFailure)
        }
        await client.shutdown()
    }

    struct Record: Decodable, Sendable, Equatable {
        var n: Int
    }

    @Test(
        "a generated client's streaming bodies decode as server-sent events and JSON Lines with the runtime's own sequences",
        arguments: ConformanceTransport.everyProtocol)
    func eventStreams(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let bridge = CourierClientTransport(client: client)
            let base = try #require(URL(string: server.baseURL))

            let eventsRequest = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/events?total=40&per=40")
            let (eventsHead, eventsBody) = try await bridge.send(eventsRequest, body: nil, baseURL: base, operationID: "ticks")
            #expect(eventsHead.headerFields[.contentType]?.hasPrefix("text/event-stream") == true)
            var events: [OpenAPIRuntime.ServerSentEvent] = []
            for try await event in try #require(eventsBody).asDecodedServerSentEvents() { events.append(event) }
            // The runtime hands over the stream's opening `retry:` as an event without data.
            try #require(events.first?.retry == 0 && events.first?.data == nil, "\(String(describing: events.first))")
            events.removeFirst()
            #expect(events.count == 40)
            #expect(events.map(\.id) == (1...40).map { "\($0)" })
            #expect(events.allSatisfy { $0.event == "tick" })
            #expect(events.first?.data == "{\"n\":1}\nend", "\(String(describing: events.first))")

            let linesRequest = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jsonl?count=500&plain=1")
            let (_, linesBody) = try await bridge.send(linesRequest, body: nil, baseURL: base, operationID: "records")
            var records: [Record] = []
            for try await record in try #require(linesBody).asDecodedJSONLines(of: Record.self) { records.append(record) }
            #expect(records == (1...500).map { Record(n: $0) })
            await client.shutdown()
        }
    }

    /// The bridge's own request for a held stream of the test server (not in the document).
    static func heldStream(_ gate: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/stream/200?size=4096&gate=\(gate)")
    }

    @Test("cancelling the task that reads a generated client's body stops the transfer", arguments: ConformanceTransport.all)
    func cancelMidStream(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let bridge = CourierClientTransport(client: client)
            let gate = "openapi-cancel-\(UUID().uuidString)"
            let base = try #require(URL(string: server.baseURL))
            let (head, body) = try await bridge.send(Self.heldStream(gate), body: nil, baseURL: base, operationID: "heldStream")
            #expect(head.status == .ok)
            let stream = try #require(body)
            let firstChunk = Atomic<Bool>(false)
            let reader = Task {
                var iterator = stream.makeAsyncIterator()
                _ = try await iterator.next()
                firstChunk.store(true, ordering: .relaxed)
                while try await iterator.next() != nil {}
            }
            #expect(await eventually { firstChunk.load(ordering: .relaxed) })
            reader.cancel()
            let error = await expectNetworkError(.cancelled) { try await reader.value }
            #expect(error?.phase == .receiving)
            #expect(await eventually { server.requestsInFlight == 0 }, "the transfer outlived its reader")
            server.release(gate)
            await client.shutdown()
        }
    }

    @Test("the deadline covers a generated client's streamed body", arguments: ConformanceTransport.all)
    func deadlineMidStream(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try transport.makeClient(server) {
                $0.timeSource = clock
                $0.requestTimeout = .seconds(30)
            }
            let bridge = CourierClientTransport(client: client)
            let gate = "openapi-deadline-\(UUID().uuidString)"
            let base = try #require(URL(string: server.baseURL))
            let (_, body) = try await bridge.send(Self.heldStream(gate), body: nil, baseURL: base, operationID: "heldStream")
            var iterator = try #require(body).makeAsyncIterator()
            _ = try await iterator.next()
            await clock.waitForAlarms(1)
            clock.advance(by: .seconds(30))
            let error = await expectNetworkError(.timedOut) { while try await iterator.next() != nil {} }
            #expect(error?.phase == .receiving)
            server.release(gate)
            await client.shutdown()
        }
    }
}
