// swift-format-ignore-file
// The Swift blocks of CourierMock's "Testing with the mock" article, compiled and run here; the
// last test checks that the article's blocks are these regions, so the article cannot drift.
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

@Test func mockArticleBlocksAreTheseRegions() throws {
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let article = try String(
        contentsOf: root.appendingPathComponent("Adapters/CourierMock/CourierMock.docc/TestingWithTheMock.md"), encoding: .utf8)
    let file = try String(contentsOf: here, encoding: .utf8)
    func normalized(_ lines: [Substring]) -> [String] {
        lines.map { $0.split(separator: " ").joined(separator: " ") }.filter { !$0.isEmpty }
    }
    var blocks: [[Substring]] = []
    var current: [Substring]?
    for line in article.split(separator: "\n", omittingEmptySubsequences: false) {
        if current == nil, line == "```swift" { current = [] } else if current != nil, line == "```" {
            blocks.append(current ?? [])
            current = nil
        } else { current?.append(line) }
    }
    var regions: [[Substring]] = []
    var region: [Substring]?
    for line in file.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("// Article block") { region = [] } else if line == "// Article end" {
            regions.append(region ?? [])
            region = nil
        } else if !line.hasSuffix("// (compiled wrapper)") { region?.append(line) }
    }
    #expect(blocks.count == regions.count, "the article has \(blocks.count) Swift blocks, this file \(regions.count) regions")
    for (block, region) in zip(blocks, regions) {
        #expect(normalized(block) == normalized(region), "an article block differs from its compiled region")
    }
}
