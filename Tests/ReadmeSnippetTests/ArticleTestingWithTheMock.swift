// swift-format-ignore-file
// The Swift blocks of CourierMock's "Testing with the mock" article, compiled and run here;
// ReadmeSnippetTests checks that the article's blocks are these regions, so it cannot drift.
// Article block 1
import Courier
import CourierMock
import Foundation
import Testing

struct Order: Codable, Sendable { let id: Int }
struct Draft: Codable, Sendable { let items: Int }

@Test func readsAnOrderAfterAFailure() async throws {
    let mock = MockTransport()
    mock.stub(.get, "/orders/:id", responses: [.status(503), .json(Order(id: 7))])
    mock.stub(.post, "/orders", .json(Order(id: 8), status: 201))

    var configuration = ClientConfiguration(baseURL: "https://shop.test", transport: "mock")
    configuration.retry = RetryPolicy()               // a GET may go again after a 503
    let client = try NetworkClient(configuration: configuration, transport: mock)

    let order = try await client.get("orders/7", as: Order.self)
    #expect(order.id == 7)
    _ = try await client.post("orders", json: Draft(items: 2), as: Order.self)

    // What was sent: every request, in order, with its head and body.
    let sent = mock.recordedRequests
    #expect(sent.map(\.path) == ["/orders/7", "/orders/7", "/orders"])   // the 503, the retry, the POST
    #expect(sent[2].head.headerFields[.contentType] == "application/json")
    let body = try JSONDecoder().decode(Draft.self, from: try #require(sent[2].body))
    #expect(body.items == 2)
}
// Article end

@Test func timesOutOnTheManualClock() async throws {  // (compiled wrapper)
// Article block 2
let mock = MockTransport()
mock.stub(.get, "/slow", .json(Order(id: 1), delay: .seconds(60)))
let time = ManualTimeSource()
var configuration = ClientConfiguration(baseURL: "https://shop.test", transport: "mock")
configuration.timeSource = time
configuration.requestTimeout = .seconds(5)
let client = try NetworkClient(configuration: configuration, transport: mock)

let call = Task { try await client.get("slow", as: Order.self) }
await time.waitForAlarms(2)             // the call's deadline and the mock's delay are set
time.advance(by: .seconds(5))           // the deadline passes first
let error = await #expect(throws: NetworkError.self) { try await call.value }
#expect(error?.kind == .timedOut)
// Article end
}  // (compiled wrapper)
