import Courier
import CourierMock
import Foundation
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
        var headers: RequestHeaders = [:]
    }

    @Test("fixed messages at debug level, each with a request id, and no secrets")
    func debugLines() async throws {
        let handler = CapturingLogHandler()
        let mock = MockTransport()
        mock.stub(.get, "/ok", .status(200))
        mock.stub(.get, "/fail", .status(500))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.logger = Logger(label: "test", factory: { _ in handler })
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "ok", headers: ["Authorization": "Bearer TOPSECRET"]))
        _ = try? await client.send(Call(path: "fail", headers: ["Authorization": "Bearer TOPSECRET"]))
        let lines = handler.lines
        #expect(lines.map(\.message) == ["courier.call.succeeded", "courier.call.failed"])
        #expect(lines.allSatisfy { $0.level < .info })
        let ids = lines.compactMap { $0.metadata["courier.request_id"]?.description }
        #expect(ids.count == 2 && Set(ids).count == 2)
        #expect(lines[1].metadata["courier.error"]?.description == "http_status")
        #expect(!lines.contains { "\($0.message) \($0.metadata)".contains("TOPSECRET") })
    }
}
