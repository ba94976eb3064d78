import Courier
import CourierMock
import Foundation
import HTTPTypes
import Logging
import Testing

/// A log handler that keeps every line, for assertions.
final class CapturingLogHandler: LogHandler, Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    private let storage = Locked<(lines: [Line], metadata: Logger.Metadata, level: Logger.Level)>(([], [:], .trace))

    var lines: [Line] { storage.withLock { $0.lines } }

    var metadata: Logger.Metadata {
        get { storage.withLock { $0.metadata } }
        set { storage.withLock { $0.metadata = newValue } }
    }

    var logLevel: Logger.Level {
        get { storage.withLock { $0.level } }
        set { storage.withLock { $0.level = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        storage.withLock { state in
            state.lines.append(
                Line(level: event.level, message: event.message.description, metadata: state.metadata.merging(event.metadata ?? [:]) { $1 })
            )
        }
    }
}

@Suite("Logging")
struct LoggingTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path: String
        var method: HTTPRequest.Method = .get
        var headers: RequestHeaders = [:]
    }

    @Test("fixed messages, a request id on every line, nothing at info or above for successes, failures at the configured level")
    func levelsAndIDs() async throws {
        let handler = CapturingLogHandler()
        handler.logLevel = .debug
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        mock.stub(.get, "/fail", .status(500))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        configuration.failureLogLevel = .warning
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "ok", headers: ["Authorization": "Bearer TOPSECRET"]))
        _ = try? await client.send(Call(path: "fail", headers: ["Authorization": "Bearer TOPSECRET"]))
        let lines = handler.lines
        #expect(lines.map(\.message) == ["courier.call.succeeded", "courier.call.failed"])
        #expect(lines.map(\.level) == [.debug, .warning])
        let ids = lines.compactMap { $0.metadata["courier.request_id"]?.description }
        #expect(ids.count == 2 && Set(ids).count == 2)
        #expect(lines[1].metadata["courier.error"]?.description == "http_status")
        #expect(!lines.contains { "\($0.message) \($0.metadata)".contains("TOPSECRET") })
    }

    struct NamedCall: Endpoint {
        typealias Output = Data
        var path: String
        var endpointName: String? { "getThing" }
    }

    @Test("an endpoint's own name (an OpenAPI operationID) is on its call's log lines")
    func endpointName() async throws {
        let handler = CapturingLogHandler()
        handler.logLevel = .debug
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        mock.stub(.get, "/fail", .status(500))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        configuration.failureLogLevel = .warning
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(NamedCall(path: "ok"))
        _ = try? await client.send(NamedCall(path: "fail"))
        _ = try await client.send(Call(path: "ok"))
        #expect(handler.lines.map { $0.metadata["courier.endpoint"]?.description } == ["getThing", "getThing", nil])
    }

    @Test("by default a failed call is one warning, and a successful one stays at debug")
    func failuresWarnByDefault() async throws {
        let handler = CapturingLogHandler()
        handler.logLevel = .trace
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        mock.stub(.get, "/fail", .status(503))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "ok"))
        _ = try? await client.send(Call(path: "fail"))
        _ = try? await client.send(Call(path: "unstubbed"))
        let lines = handler.lines
        #expect(lines.filter { $0.message == "courier.call.failed" }.map(\.level) == [.warning, .warning])
        #expect(
            lines.filter { $0.message != "courier.call.failed" }.allSatisfy { $0.level <= .debug },
            "\(lines.map { "\($0.level) \($0.message)" })")
        #expect(ClientConfiguration().failureLogLevel == .warning)
    }

    @Test("an API object's own logger replaces the client's for its call")
    func perCallLogger() async throws {
        struct Logged: Endpoint {
            typealias Output = Data
            var path: String { "ok" }
            let logger: Logger?
        }
        let clientHandler = CapturingLogHandler()
        let callHandler = CapturingLogHandler()
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "client", factory: { _ in clientHandler })
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Logged(logger: Logger(label: "call", factory: { _ in callHandler })))
        #expect(clientHandler.lines.isEmpty)
        #expect(callHandler.lines.map(\.message).contains("courier.call.succeeded"))
    }

    @Test("a response body is logged only when the configuration opts in, and then its first KiB only")
    func bodiesOnlyWhenAsked() async throws {
        let handler = CapturingLogHandler()
        let mock = MockTransport()
        mock.stub(.post, "/token", .status(200, body: Data(#"{"access_token":"TOPSECRET"}"#.utf8)))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        _ = try await NetworkClient(configuration: configuration, transport: mock).send(Call(path: "token", method: .post))
        #expect(!handler.lines.isEmpty, "trace logging is on")
        #expect(!handler.lines.contains { "\($0.message) \($0.metadata)".contains("TOPSECRET") })
        configuration.logsResponseBodies = true
        _ = try await NetworkClient(configuration: configuration, transport: mock).send(Call(path: "token", method: .post))
        #expect(handler.lines.contains { $0.message == "courier.response.body" })
    }

    @Test("trace level shows the request and a truncated body when asked; cancellation is logged at debug")
    func traceAndCancel() async throws {
        let handler = CapturingLogHandler()
        let mock = MockTransport()
        mock.stub(.get, "/big", .status(200, body: Data(repeating: UInt8(ascii: "a"), count: 5000)))
        mock.stub(.get, "/slow", .status(200, delay: .seconds(30)))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        configuration.logsResponseBodies = true
        let clock = ManualTimeSource()
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "big"))
        let body = handler.lines.first { $0.message == "courier.response.body" }?.metadata["courier.body"]?.description ?? ""
        #expect(body.hasSuffix("(5000 bytes)"))
        #expect(body.count < 1100)
        #expect(handler.lines.first?.message == "courier.call.started")
        let task = Task { try await client.send(Call(path: "slow")) }
        await clock.waitForAlarms(2)  // the deadline and the mock's delay: the call is under way
        task.cancel()
        _ = try? await task.value
        let cancelled = handler.lines.first { $0.message == "courier.call.cancelled" }
        #expect(cancelled?.level == .debug)
    }

    /// Logs one line through the context's logger, then hands `next` a context with `replacement`
    /// as its logger when one is given.
    struct LoggingMiddleware: Middleware {
        let message: Logger.Message
        var replacement: Logger?

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            context.logger.info(message)
            var context = context
            if let replacement { context.logger = replacement }
            return try await next(request, body, context)
        }
    }

    @Test("middleware log through the context with the call's request id; a logger set on the context is passed on as given")
    func middlewareLoggerCarriesTheID() async throws {
        let handler = CapturingLogHandler()
        handler.logLevel = .debug
        let replacementHandler = CapturingLogHandler()
        let replacement = Logger(label: "replacement", factory: { _ in replacementHandler })
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        let client = try NetworkClient(
            configuration: configuration, transport: mock,
            middleware: [
                LoggingMiddleware(message: "outer", replacement: replacement), LoggingMiddleware(message: "inner", replacement: nil),
            ])
        _ = try await client.send(Call(path: "ok"))
        let outer = handler.lines.first { $0.message == "outer" }
        let succeeded = handler.lines.first { $0.message == "courier.call.succeeded" }
        let id = outer?.metadata["courier.request_id"]?.description
        #expect(id != nil && id == succeeded?.metadata["courier.request_id"]?.description)
        let inner = replacementHandler.lines.first { $0.message == "inner" }
        #expect(inner != nil)
        #expect(inner?.metadata["courier.request_id"] == nil)
        #expect(!handler.lines.contains { $0.message == "inner" })
    }
}
