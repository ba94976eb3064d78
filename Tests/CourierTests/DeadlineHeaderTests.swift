import Courier
import CourierMock
import Foundation
import HTTPTypes
import Testing

@Suite("The deadline sent downstream")
struct DeadlineHeaderTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path = "x"
        var headers: RequestHeaders = [:]
        var timeout: Duration? = .seconds(10)
    }

    static let header = HTTPField.Name("X-Request-Timeout-Ms")!

    @Test("each attempt carries the time left then: the full timeout first, less after a slow attempt")
    func eachAttempt() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", responses: [.status(503, delay: .seconds(3)), .status(200)])
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.timeSource = clock
        configuration.exportsMetrics = false
        configuration.resilience.deadlineHeader = "X-Request-Timeout-Ms"
        let client = try NetworkClient(
            configuration: configuration, transport: mock, middleware: [RetryMiddleware(policy: RetryPolicy(), random: { 0 })])
        let call = Task { try await client.send(Call()) }
        await clock.waitForAlarms(2)  // the call's deadline and the mock's delay
        clock.advance(by: .seconds(3))
        _ = try await call.value
        #expect(mock.recordedRequests.map { $0.head.headerFields[Self.header] } == ["10000", "7000"])
    }

    @Test("a request that sets the header keeps its value; without the setting nothing is sent")
    func callersOwnAndOff() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.exportsMetrics = false
        configuration.resilience.deadlineHeader = "X-Request-Timeout-Ms"
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(headers: ["X-Request-Timeout-Ms": "250"]))
        configuration.resilience.deadlineHeader = nil
        _ = try await NetworkClient(configuration: configuration, transport: mock).send(Call())
        #expect(mock.recordedRequests.map { $0.head.headerFields[Self.header] } == ["250", nil])
    }

    @Test("a name that is not a header Courier may set is refused, naming the key", arguments: ["Bad Name", "", "Content-Length", "host"])
    func badNames(name: String) {
        var configuration = ClientConfiguration(baseURL: "https://a.test", transport: "mock")
        configuration.resilience.deadlineHeader = name
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.key == "resilience.deadlineHeader")
    }
}
