// Bootstraps a global in-memory tracer, then makes one call through one transport with
// `TracingMiddleware()` (no tracer given, so the bootstrapped one) and prints, as one JSON line, the
// spans that finished and the trace headers the server received. Run by TracingBootstrapTests: the
// bootstrap is process-wide and happens once, so it cannot run inside the test process.
//
//   CourierTracingProbe <curl|urlsession|ahc>
//
// Exit status 0 with the JSON line, or 1 with a message on standard error.
//
//   CourierTracingProbe logging
//
// Bootstraps swift-log with its standard-output handler, as a new service does, and makes one call
// that fails (a 500, with a bearer token and a token in the query) through a client whose
// configuration, made before the bootstrap, sets no logger: LoggingBootstrapTests reads what it
// printed.
import Courier
import CourierCurl
import CourierTestServer
import CourierTracing
import CourierURLSession
import Foundation
import InMemoryTracing
import Logging
import Tracing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// What the probe prints.
struct Report: Codable {
    /// Every finished span's operation name, in the order they ended.
    var spans: [String]
    /// How many finished spans are client spans.
    var clientSpans: Int
    /// The span ids the server received in the tracer's header, in order.
    var receivedSpanIDs: [String]
    /// The span id of the call's own span.
    var callSpanID: String?
    /// The `traceparent` values the server received.
    var traceparents: [String]
}

struct Echo: Endpoint {
    typealias Output = EchoResponse
    var path: String { "echo/bootstrapped" }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

func makeTransport(_ name: String) throws -> any Transport {
    switch name {
    case "curl": return try CurlTransport()
    case "urlsession": return URLSessionTransport()
    case "ahc":
        #if AsyncHTTPClient
            return try AsyncHTTPClientTransport()
        #else
            fail("this build does not link AsyncHTTPClient")
        #endif
    default: fail("unknown transport \(name)")
    }
}

struct Failing: Endpoint {
    typealias Output = Data
    var path: String { "status/500" }
    var query: [QueryItem] { [QueryItem("access_token", "query-secret-7")] }
    var headers: RequestHeaders { ["Authorization": "Bearer header-secret-7"] }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else { fail("usage: CourierTracingProbe <curl|urlsession|ahc|logging>") }
if arguments[1] == "logging" {
    // Made before the bootstrap, as a service's static defaults can be: its default logger must
    // still be the bootstrapped backend's.
    var configuration = ClientConfiguration()
    LoggingSystem.bootstrap(StreamLogHandler.standardOutput)
    do {
        let server = try await TestServer.start(mode: .http1)
        configuration.baseURL = server.baseURL
        let client = try NetworkClient(configuration: configuration, transport: try CurlTransport())
        _ = try? await client.send(Failing())
        await client.shutdown()
        await server.shutdown()
    } catch {
        fail("the probe could not run: \(error)")
    }
    exit(0)
}
let tracer = InMemoryTracer()
// Before the transport exists: AsyncHTTPClient picks up the bootstrapped tracer when its client
// is configured, which is what would give a call a second span.
InstrumentationSystem.bootstrap(tracer)

do {
    let server = try await TestServer.start(mode: .http1)
    let transport = try makeTransport(arguments[1])
    let client = try NetworkClient(
        configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, middleware: [TracingMiddleware()])
    let echo = try await client.send(Echo())
    await client.shutdown()
    await server.shutdown()
    let spans = tracer.finishedSpans
    let call = spans.first { $0.operationName == "GET" }
    func received(_ name: String) -> [String] { echo.headers.filter { $0.first?.lowercased() == name }.compactMap(\.last) }
    let report = Report(
        spans: spans.map(\.operationName), clientSpans: spans.filter { $0.kind == .client }.count,
        receivedSpanIDs: received(InMemoryTracer.spanIDKey), callSpanID: call?.spanID, traceparents: received("traceparent"))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(report), as: UTF8.self))
} catch {
    fail("the call failed: \(error)")
}
