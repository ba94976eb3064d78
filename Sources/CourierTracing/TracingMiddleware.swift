#if Tracing
    import Courier
    import Foundation
    import HTTPTypes
    import Tracing

    /// A client span per call (swift-distributed-tracing) with the standard HTTP attributes, and the
    /// trace propagated on the wire.
    ///
    /// Named and attributed by the OpenTelemetry semantic conventions for HTTP client spans:
    ///
    /// - The span is named by the method (`GET`), or `HTTP` for a method outside the conventions'
    ///   list, and is a child of the task's service context. While the rest of the chain runs, the
    ///   span's context is `ServiceContext.current`, so spans that later middleware or the transport
    ///   start are its children.
    /// - Attributes: `http.request.method` (`_OTHER` with `http.request.method_original` for a method
    ///   outside the list), `url.full` (redacted: no user info, token-like query values replaced),
    ///   `server.address`, `server.port`; when the call ends, `http.response.status_code`,
    ///   `network.protocol.version`, `network.peer.address` and `network.peer.port` when the transport
    ///   reported them,
    ///   `http.request.resend_count` when the request went more than once (retries, redirects,
    ///   resends), and `error.type` on failure: the status code for a `4xx` or `5xx` answer, else the
    ///   error's bounded description. The span's status is `error` for those.
    /// - One span covers the call (installed as application middleware, retries and redirects share
    ///   it, and the resend count says how often it went); installed as network middleware it covers
    ///   one attempt.
    /// - Propagation: the tracer injects its headers (with swift-otel, the W3C `traceparent`). When it
    ///   injected no `traceparent` (no tracer bootstrapped, or a tracer with another format), Courier
    ///   writes one itself, continuing `ServiceContext.traceParent` when the service set it.
    ///
    /// Installed by the caller as the first application middleware, so retries share the span.
    public struct TracingMiddleware: Middleware {
        private let tracer: (any Tracer)?
        private let writesTraceParent: Bool

        /// Creates the middleware.
        /// - Parameters:
        ///   - tracer: The tracer; `nil` (the default) uses `InstrumentationSystem.tracer` at each call.
        ///   - writesTraceParent: Whether Courier writes `traceparent` when the tracer did not; `true` by default.
        public init(tracer: (any Tracer)? = nil, writesTraceParent: Bool = true) {
            self.tracer = tracer
            self.writesTraceParent = writesTraceParent
        }

        /// Runs the call inside a client span and adds the propagation headers.
        public func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            let tracer = self.tracer ?? InstrumentationSystem.tracer
            let parent = ServiceContext.current ?? .topLevel
            let known = Self.knownMethods.contains(request.method.rawValue)
            let span = tracer.startSpan(known ? request.method.rawValue : "HTTP", context: parent, ofKind: .client)
            defer { span.end() }
            if span.isRecording {
                let authority = request.authority ?? ""
                span.attributes["http.request.method"] = known ? request.method.rawValue : "_OTHER"
                if !known { span.attributes["http.request.method_original"] = request.method.rawValue }
                span.attributes["url.full"] = Redaction.redactedURL(request.urlText)
                let (host, port) = Origin.hostAndPort(of: authority)
                span.attributes["server.address"] = host
                span.attributes["server.port"] = port ?? (request.scheme == "https" ? 443 : 80)
            }
            var request = request
            // On a hop that left the call's origin only the W3C trace context goes (`traceparent`,
            // `tracestate`): a tracer may also inject `baggage`, which can name users or tenants.
            if context.hasCrossedOrigin {
                var injected = HTTPFields()
                tracer.inject(span.context, into: &injected, using: HTTPFieldsInjector())
                // Set, not appended: the hop may carry the previous hop's (both are on the safelist).
                for field in injected where Self.crossOriginNames.contains(field.name) {
                    request.headerFields[field.name] = field.value
                }
            } else {
                tracer.inject(span.context, into: &request.headerFields, using: HTTPFieldsInjector())
            }
            if writesTraceParent, request.headerFields[Self.traceParentName] == nil {
                request.headerFields[Self.traceParentName] = TraceParent.child(of: parent.traceParent).description
            }
            do {
                // The span is the current context for everything below it (later middleware, the
                // transport, and any library they call), so their spans are its children.
                let response = try await ServiceContext.withValue(span.context) { try await next(request, body, context) }
                let code = response.head.status.code
                span.attributes["http.response.status_code"] = code
                if code >= 400 {
                    span.attributes["error.type"] = String(code)
                    span.setStatus(SpanStatus(code: .error))
                }
                if span.isRecording { Self.record(context.recorder.metrics, on: span) }
                return response
            } catch {
                let failure = NetworkError.converting(error, phase: context.recorder.phase)
                if let status = failure.status { span.attributes["http.response.status_code"] = status }
                // A refused status names itself; any other failure by its kind.
                let refused = failure.kind == .httpStatus ? failure.status : nil
                span.attributes["error.type"] = refused.map(String.init) ?? failure.shortDescription
                span.setStatus(SpanStatus(code: .error, message: failure.shortDescription))
                if span.isRecording { Self.record(failure.metrics ?? context.recorder.metrics, on: span) }
                throw failure
            }
        }

        /// What the call's metrics say about the exchange, in the conventions' names.
        private static func record(_ metrics: RequestMetrics, on span: any Span) {
            if let version = metrics.httpVersion { span.attributes["network.protocol.version"] = version }
            if let peer = metrics.remoteAddress {
                let (address, port) = Self.addressAndPort(peer)
                span.attributes["network.peer.address"] = address
                if let port { span.attributes["network.peer.port"] = port }
            }
            // Every attempt after the first went again (a retry, a redirect, an auth repeat, a resend
            // of the unsent), except a hedged copy, which runs beside the first; the transport's own
            // resends are not attempts.
            let resends = max(0, metrics.attempts - 1 - metrics.hedges) + metrics.transportResends
            if resends > 0 { span.attributes["http.request.resend_count"] = resends }
        }

        /// A peer as the transports write it (`127.0.0.1:8080`, `[::1]:443`, an address alone) split
        /// into the conventions' address and port.
        package static func addressAndPort(_ peer: String) -> (address: String, port: Int?) {
            // An IPv6 address without brackets has no port.
            if !peer.hasPrefix("["), peer.utf8.count(where: { $0 == UInt8(ascii: ":") }) > 1 { return (peer, nil) }
            let (host, port) = Origin.hostAndPort(of: peer)
            return (host.trimmingCharacters(in: ["[", "]"]), port)
        }

        /// The methods the conventions name; any other is `_OTHER`.
        static let knownMethods: Set<String> = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE", "QUERY"]

        /// `traceparent`.
        public static let traceParentName = HTTPField.Name("traceparent")!
        /// The trace headers injected on a hop that left the call's origin: the W3C trace context.
        static let crossOriginNames: Set<HTTPField.Name> = [traceParentName, HTTPField.Name("tracestate")!]
    }

    /// Writes propagation headers into `HTTPFields`; invalid names or values are skipped.
    struct HTTPFieldsInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
            guard let name = HTTPField.Name(key), HTTPField.isValidValue(value) else { return }
            carrier[name] = value
        }
    }
#endif
