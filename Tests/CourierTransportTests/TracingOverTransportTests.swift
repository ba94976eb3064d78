import Courier
import CourierConformance
import CourierTestServer
import CourierTracing
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// Span parenting and propagation with a real tracer, over every transport: what reaches the
/// server is the call's span, and spans started below Courier's are its children.
@Suite("Tracing over real transports")
struct TracingOverTransportTests {
    struct Echo: Endpoint {
        typealias Output = EchoResponse
        var path: String { "echo/traced" }
    }

    /// Starts a span of its own from the current service context, as instrumented code below
    /// Courier's span (a network middleware, or a library the transport calls) would.
    struct ChildSpanMiddleware: Middleware {
        let tracer: InMemoryTracer

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            let span = tracer.startSpan("below", context: ServiceContext.current ?? .topLevel)
            defer { span.end() }
            return try await next(request, body, context)
        }
    }

    @Test(
        "one client span per call, the current context below it, and its ids on the wire",
        arguments: ConformanceTransport.all + [ConformanceTransport.curl.over(.tls)])
    func parenting(transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let tracer = InMemoryTracer()
            // The transport as the conformance cases make it for this server, in a client with
            // network middleware as well.
            let plain = try transport.makeClient(server)
            let traced = try NetworkClient(
                configuration: plain.configuration, transport: plain.transport,
                middleware: [TracingMiddleware(tracer: tracer)], networkMiddleware: [ChildSpanMiddleware(tracer: tracer)])
            // The service's own span, as a server framework would have started it.
            let service = tracer.startSpan("GET /orders", ofKind: .server)
            let echo = try await ServiceContext.withValue(service.context) { try await traced.send(Echo()) }
            service.end()

            let spans = tracer.finishedSpans
            let calls = spans.filter { $0.operationName == "GET" }
            #expect(calls.count == 1, "one span per call: \(spans.map(\.operationName))")
            let call = try #require(calls.first)
            let below = try #require(spans.first { $0.operationName == "below" })
            #expect(call.parentSpanID == service.context.inMemorySpanContext?.spanID, "the call's span continues the service's")
            #expect(call.traceID == service.context.inMemorySpanContext?.traceID)
            #expect(below.parentSpanID == call.spanID, "the span is the current context below it")
            #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 200)

            func received(_ name: String) -> [String] { echo.headers.filter { $0.first?.lowercased() == name }.compactMap(\.last) }
            #expect(received(InMemoryTracer.spanIDKey) == [call.spanID], "the server sees the call's span, once")
            #expect(received(InMemoryTracer.traceIDKey) == [call.traceID])
            #expect(received("traceparent").count == 1, "one traceparent, whatever the transport adds")
            await traced.shutdown()
        }
    }
}
