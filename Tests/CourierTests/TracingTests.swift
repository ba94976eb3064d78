#if Tracing
    import Courier
    import CourierMock
    import CourierTracing
    import Foundation
    import InMemoryTracing
    import Logging
    import Testing
    import Tracing

    /// The tracing wing (`CourierTracing`, trait `Tracing`): spans, their attributes and the
    /// propagated trace context.
    @Suite("Tracing")
    struct TracingTests {
        typealias Call = ObservationTests.Call

        @Test("tracing: a client span with HTTP attributes, and a traceparent on the wire that continues the service's trace")
        func tracing() async throws {
            let tracer = InMemoryTracer()
            let mock = MockTransport()
            mock.stub(.get, "/x", .status(503))
            let client = try NetworkClient(
                configuration: ClientConfiguration(baseURL: "https://api.test:8443", transport: "mock"), transport: mock,
                middleware: [TracingMiddleware(tracer: tracer)])
            let incoming = try #require(TraceParent(header: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
            var context = ServiceContext.topLevel
            context.traceParent = incoming
            await ServiceContext.withValue(context) {
                _ = try? await client.send(Call(query: [QueryItem("token", "T")]))
            }
            let span = try #require(tracer.finishedSpans.first)
            #expect(span.operationName == "GET")
            #expect(span.kind == .client)
            #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
            #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
            #expect(span.attributes["server.address"]?.toSpanAttribute() == "api.test")
            #expect(span.attributes["server.port"]?.toSpanAttribute() == 8443)
            #expect(span.attributes["url.full"]?.toSpanAttribute() == "https://api.test:8443/x?token=REDACTED")
            #expect(span.status?.code == .error)
            let sent = try #require(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("traceparent")!])
            let parsed = try #require(TraceParent(header: sent))
            #expect(parsed.traceID == incoming.traceID)
            #expect(parsed.parentID != incoming.parentID)
        }

        @Test("tracing: names and attributes follow the OpenTelemetry HTTP client conventions")
        func tracingConventions() async throws {
            let tracer = InMemoryTracer()
            let mock = MockTransport()
            mock.stub(.get, "/missing", .status(404))
            mock.stub(.get, "/flaky", responses: [.status(503), .status(200)])
            mock.stub(nil, "/purge", .status(200))
            var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
            configuration.exportsMetrics = false
            let client = try NetworkClient(
                configuration: configuration, transport: mock,
                middleware: [TracingMiddleware(tracer: tracer), RetryMiddleware(policy: RetryPolicy(), random: { 0 })])

            _ = try? await client.send(Call(path: "missing"))
            let missing = try #require(tracer.finishedSpans.last)
            #expect(missing.operationName == "GET")
            #expect(missing.attributes["error.type"]?.toSpanAttribute() == "404")
            #expect(missing.status?.code == .error)
            #expect(missing.attributes["http.request.resend_count"] == nil)

            _ = try await client.send(Call(path: "flaky"))
            let flaky = try #require(tracer.finishedSpans.last)
            #expect(flaky.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(flaky.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
            #expect(flaky.attributes["error.type"] == nil)
            #expect(flaky.status == nil)

            _ = try await client.send(.init(rawValue: "PURGE")!, "purge", as: Data.self)
            let purge = try #require(tracer.finishedSpans.last)
            #expect(purge.operationName == "HTTP")
            #expect(purge.attributes["http.request.method"]?.toSpanAttribute() == "_OTHER")
            #expect(purge.attributes["http.request.method_original"]?.toSpanAttribute() == "PURGE")
        }

        @Test("tracing: a failure without an answer names its kind; a peer splits into address and port")
        func tracingFailureAndPeer() async throws {
            let tracer = InMemoryTracer()
            let mock = MockTransport()
            mock.stub(.get, "/down", .failure(NetworkError(kind: .connectFailure, phase: .connect, message: "refused")))
            var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
            configuration.exportsMetrics = false
            let client = try NetworkClient(configuration: configuration, transport: mock, middleware: [TracingMiddleware(tracer: tracer)])
            _ = try? await client.send(Call(path: "down"))
            let span = try #require(tracer.finishedSpans.last)
            #expect(span.attributes["error.type"]?.toSpanAttribute() == "connect_failure")
            #expect(span.attributes["http.response.status_code"] == nil)
            #expect(span.status?.code == .error)

            #expect(TracingMiddleware.addressAndPort("127.0.0.1:8080") == ("127.0.0.1", 8080))
            #expect(TracingMiddleware.addressAndPort("[::1]:443") == ("::1", 443))
            #expect(TracingMiddleware.addressAndPort("::1") == ("::1", nil))
            #expect(TracingMiddleware.addressAndPort("10.0.0.1") == ("10.0.0.1", nil))
        }

        /// Starts a span of its own from the current service context, as instrumented code below
        /// Courier's span would.
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

        @Test("tracing: the client span is the current context for the middleware below it")
        func tracingSpanIsCurrentBelow() async throws {
            let tracer = InMemoryTracer()
            let mock = MockTransport()
            mock.stub(.get, "/x", .status(200))
            let client = try NetworkClient(
                configuration: ClientConfiguration(baseURL: "https://api.test", transport: "mock"), transport: mock,
                middleware: [TracingMiddleware(tracer: tracer), ChildSpanMiddleware(tracer: tracer)])
            _ = try await client.send(Call(query: []))
            let spans = tracer.finishedSpans
            let courier = try #require(spans.first { $0.operationName == "GET" })
            let below = try #require(spans.first { $0.operationName == "below" })
            #expect(below.parentSpanID == courier.spanID)
            #expect(below.traceID == courier.traceID)
        }

        @Test(
            "traceparent parsing follows the W3C rules",
            arguments: [
                ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true),
                ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
                ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
                ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
                ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
                ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false),
                ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true),
            ])
        func traceParentParsing(header: String, valid: Bool) {
            let parsed = TraceParent(header: header)
            #expect((parsed != nil) == valid)
            if valid, header.hasPrefix("00") { #expect(parsed?.description == header) }
        }
    }
#endif
