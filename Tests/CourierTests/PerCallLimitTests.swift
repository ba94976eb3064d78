import Courier
import CourierMock
import CourierTestSupport
import Foundation
import Testing

/// An endpoint's own response limit (``Endpoint/maxResponseBytes``): the worked example of a
/// per-call setting in docs/INTERNALS.md.
@Suite("A call's own response limit")
struct PerCallLimitTests {
    struct Report: Endpoint {
        typealias Output = Data
        var limit: Int?
        var path: String { "report" }
        var maxResponseBytes: Int? { limit }
    }

    final class ReportAPI: BaseAPI<Data>, @unchecked Sendable {
        override var path: String { "report" }
        override var maxResponseBytes: Int? { 100 }
    }

    @Test("a call's limit replaces the client's, both ways, for a value and an API object")
    func limitApplies() async throws {
        let mock = MockTransport()
        mock.stub(.get, "report", .status(200, body: Data(repeating: 7, count: 500)))
        let client = try makeClient(mock)
        #expect(try await client.send(Report(limit: nil)).count == 500)
        #expect(try await client.send(Report(limit: 500)).count == 500)
        let refused = await #expect(throws: NetworkError.self) { try await client.send(Report(limit: 499)) }
        #expect(refused?.kind == .responseTooLarge)
        let fromObject = await #expect(throws: NetworkError.self) { try await ReportAPI(client: client).response() }
        #expect(fromObject?.kind == .responseTooLarge)
    }

    @Test("a limit out of range fails the call before anything is sent", arguments: [0, -1, (16 << 30) + 1])
    func outOfRange(limit: Int) async throws {
        let mock = MockTransport()
        mock.stub(.get, "report", .status(200, body: Data("ok".utf8)))
        let client = try makeClient(mock)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Report(limit: limit)) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.phase == .building)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("identical queued calls with different limits never share one transfer")
    func limitsDoNotShare() async throws {
        let mock = MockTransport()
        mock.stub(.get, "report", .status(200, body: Data(repeating: 7, count: 500), delay: .milliseconds(100)))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.queue = RequestQueue.Limits()
        // The mock holds each answer until this clock moves, so both calls are in flight at once:
        // had they shared one transfer, the second request would never arrive.
        let time = ManualTimeSource()
        configuration.timeSource = time
        let client = try NetworkClient(configuration: configuration, transport: mock)
        let small = Task { try await client.response(for: Report(limit: 100)) }
        let whole = Task { try await client.response(for: Report(limit: nil)) }
        #expect(await eventually(timeout: .seconds(20)) { mock.recordedRequests.count == 2 }, "each limit has its own transfer")
        time.advance(by: .milliseconds(100))
        #expect(try await whole.value.value.count == 500)
        let refused = await small.result
        #expect((try? refused.get()) == nil)
        #expect(mock.recordedRequests.count == 2)
    }
}
