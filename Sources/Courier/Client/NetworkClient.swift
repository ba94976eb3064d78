import Foundation
import HTTPTypes
import Logging

/// The configured stack that runs calls: middleware around one transport.
///
/// Build one per service (or per upstream) and share it; it is `Sendable` and cheap to call from
/// many tasks at once. Call ``shutdown()`` when done.
///
/// ```swift
/// let client = try NetworkClient(
///     configuration: .load(defaults: ClientConfiguration(baseURL: "https://api.example.com")),
///     registry: TransportRegistry([.urlSession()])
/// )
/// let user = try await client.send(GetUser(id: 42))
/// ```
public final class NetworkClient: Sendable {
    /// The configuration the client was built from.
    public let configuration: ClientConfiguration
    /// The transport at the end of the chain.
    public let transport: any Transport
    /// The middleware, in the order requests pass them.
    public let middleware: [any Middleware]
    private let chain: Middleware.Next
    /// The configuration's default headers, validated once.
    private let defaultFields: HTTPFields
    /// The configuration's base URL, parsed once (a bad one fails each call that uses it).
    private let configuredBase: Result<URLBuilder.Base, NetworkError>?
    /// True when nothing but a deadline-enforcing transport runs the call, so the client's own
    /// deadline timer (a task group per call) can be skipped.
    private let transportEndsAtDeadline: Bool

    /// Creates a client around a transport made in code.
    /// - Parameters:
    ///   - configuration: Base URL, timeouts, limits, default headers.
    ///   - transport: The transport.
    ///   - middleware: Middleware, in the order requests pass them.
    /// - Throws: ``ConfigurationError`` when a configuration value is out of range.
    public init(configuration: ClientConfiguration, transport: any Transport, middleware: [any Middleware] = []) throws(ConfigurationError)
    {
        try configuration.validate()
        do {
            defaultFields = try configuration.defaultHeaders.validatedFields(secretNames: configuration.secretHeaderNames)
        } catch {
            throw ConfigurationError(key: "headers", value: nil, allowed: "valid header names and values: \(error.message)", source: "code")
        }
        configuredBase = configuration.baseURL.map { text in Result { () throws(NetworkError) in try URLBuilder.parseBase(text) } }
        self.configuration = configuration
        self.transport = transport
        self.middleware = middleware
        self.chain = MiddlewareChain.build(middleware, around: transport)
        self.transportEndsAtDeadline = middleware.isEmpty && transport.enforcesDeadline
    }

    /// Creates a client whose transport is chosen by `configuration.transport` from a registry.
    /// - Parameters:
    ///   - configuration: The configuration; see ``ClientConfiguration/load(environment:defaults:)``.
    ///   - registry: The transports this program links.
    ///   - middleware: Middleware, in the order requests pass them.
    /// - Throws: ``ConfigurationError`` for an unknown transport name or a value out of range.
    public convenience init(configuration: ClientConfiguration, registry: TransportRegistry, middleware: [any Middleware] = []) throws {
        let transport = try registry.makeTransport(for: configuration)
        try self.init(configuration: configuration, transport: transport, middleware: middleware)
    }

    /// Runs an endpoint and returns its decoded output.
    /// - Parameter endpoint: The call.
    /// - Returns: The decoded output.
    /// - Throws: ``NetworkError``, including ``NetworkError/Kind/cancelled`` when the task is cancelled.
    public func send<E: Endpoint>(_ endpoint: E) async throws -> E.Output {
        try await response(for: endpoint).value
    }

    /// Runs an endpoint and returns its output with the response head and the metrics.
    /// - Parameter endpoint: The call.
    /// - Returns: The output, head and metrics.
    /// - Throws: ``NetworkError``.
    public func response<E: Endpoint>(for endpoint: E) async throws -> DecodedResponse<E.Output> {
        try await execute(CallDescription(endpoint)).get()
    }

    /// Stops the transport. Calls made afterwards fail.
    public func shutdown() async {
        await transport.shutdown()
    }

    /// Runs one call: build, middleware and transport under the deadline, status check, decode.
    /// Never throws: every failure comes back as a ``NetworkError`` with the metrics so far.
    func execute<Output>(_ call: CallDescription<Output>) async -> Result<DecodedResponse<Output>, NetworkError> {
        let clock = ContinuousClock()
        let start = clock.now
        let recorder = TransferRecorder(transport: transport.name)
        var sentRequest: HTTPRequest?
        var logger = configuration.logger

        // The redacted summary is made only on failure: successful calls do not pay for redaction.
        func fail(_ error: NetworkError) -> Result<DecodedResponse<Output>, NetworkError> {
            var error = error
            if error.request == nil {
                error.request =
                    if let sentRequest {
                        NetworkError.RequestSummary(method: sentRequest.method.rawValue, url: Self.url(of: sentRequest))
                    } else {
                        NetworkError.RequestSummary(
                            method: call.method.rawValue, url: (call.baseURL ?? configuration.baseURL ?? "") + "/" + call.path)
                    }
            }
            recorder.update { $0.total = start.duration(to: clock.now) }
            error.metrics = recorder.metrics
            logger.debug(
                "courier.call.failed",
                metadata: [
                    "courier.error": .string(error.shortDescription), "courier.phase": .string(error.phase.description),
                    "courier.status": .stringConvertible(error.status ?? 0),
                ]
            )
            return .failure(error)
        }

        let built: (request: HTTPRequest, body: RequestBody?)
        do {
            built = try RequestBuilder.build(
                call, configuration: configuration, defaultFields: defaultFields, configuredBase: configuredBase)
        } catch {
            return fail(error)
        }
        sentRequest = built.request
        let timeout = call.timeout ?? configuration.requestTimeout
        let requestID = Self.makeRequestID()
        logger[metadataKey: "courier.request_id"] = .string(requestID)
        let context = RequestContext(
            requestID: requestID,
            team: call.team,
            deadline: start.advanced(by: timeout),
            connectTimeout: configuration.connectTimeout,
            maxResponseBytes: configuration.maxResponseBytes,
            maxRedirects: configuration.maxRedirects,
            secretHeaderNames: configuration.secretHeaderNames,
            logger: logger,
            recorder: recorder,
            httpVersion: call.httpVersion
        )
        recorder.update { $0.bytesSent = built.body?.length ?? 0 }

        let head: HTTPResponse
        let data: Data
        let networkStart = clock.now
        do {
            // The phase moves on before any child task runs, so a deadline that strikes before the
            // transport is scheduled does not report the call as still being built.
            recorder.enter(.sending)
            let exchange: @Sendable () async throws -> (HTTPResponse, Data) = { [chain] in
                let response = try await chain(built.request, built.body, context)
                recorder.enter(.receiving)
                let data = try await response.body.collect(upTo: context.maxResponseBytes)
                return (response.head, data)
            }
            (head, data) =
                if transportEndsAtDeadline {
                    try await exchange()
                } else {
                    try await Deadline.run(until: context.deadline, timeout: timeout, recorder: recorder, exchange)
                }
        } catch {
            return fail(NetworkError.converting(error, phase: recorder.phase))
        }
        recorder.update {
            $0.network = networkStart.duration(to: clock.now)
            $0.bytesReceived = Int64(data.count)
        }

        recorder.enter(.validating)
        guard call.statusValidation.isAcceptable(head.status.code) else {
            var error = NetworkError(
                kind: .httpStatus, phase: .validating,
                message: "the server answered \(head.status.code) \(head.status.reasonPhrase)", status: head.status.code
            )
            error.responseBody = data.prefix(NetworkError.maximumRetainedBodyBytes)
            error.decodedErrorBody = call.errorDecoder?.decode(data)
            return fail(error)
        }

        recorder.enter(.decoding)
        let decodeStart = clock.now
        let value: Output
        do {
            value = try call.decoder.decode(data, head)
        } catch {
            recorder.update { $0.decode = decodeStart.duration(to: clock.now) }
            var failure = NetworkError(
                kind: .decoding, phase: .decoding, message: "the body could not be decoded as \(Output.self): \(error)",
                status: head.status.code, underlying: error
            )
            failure.responseBody = data.prefix(NetworkError.maximumRetainedBodyBytes)
            return fail(failure)
        }
        recorder.update {
            $0.decode = decodeStart.duration(to: clock.now)
            $0.total = start.duration(to: clock.now)
        }
        let metrics = recorder.metrics
        logger.debug("courier.call.succeeded", metadata: ["courier.status": .stringConvertible(head.status.code)])
        return .success(DecodedResponse(value: value, head: head, metrics: metrics))
    }

    /// The request's URL as text (scheme, authority and path).
    static func url(of request: HTTPRequest) -> String {
        "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")"
    }

    /// A process-unique id: a random prefix drawn once per process, then a counter. Cheaper than
    /// a UUID per call, and still unique across processes for log correlation.
    private static func makeRequestID() -> String {
        let number = requestCounter.withLock { counter -> UInt64 in
            counter &+= 1
            return counter
        }
        return requestIDPrefix + String(number, radix: 16)
    }

    private static let requestIDPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 16) + "-"
    private static let requestCounter = Locked<UInt64>(0)
}
