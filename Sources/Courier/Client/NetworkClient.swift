import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import Synchronization

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
    /// The application middleware (once per call), in the order requests pass them, including
    /// those the configuration adds (team headers first, retry last).
    public let middleware: [any Middleware]
    /// The network middleware (once per attempt), in the order requests pass them.
    public let networkMiddleware: [any Middleware]
    /// The observers told about every finished call, including the metrics export when enabled.
    public let observers: [any CallObserver]
    /// The queue calls wait in when their API object names none; `nil` runs them at once.
    public let queue: RequestQueue?
    /// The one chain every call passes: built-in links and middleware, folded once.
    private let chain: CallChain
    /// The configuration's default headers, validated once.
    private let defaultFields: HTTPFields
    /// The configuration's base URL, parsed once (a bad one fails each call that uses it).
    private let configuredBase: ParsedBase?
    /// Whether the configuration's clock is the system clock, decided once (a dynamic cast per
    /// call showed in profiles): its alarms go straight to the shared watch.
    private let onSystemClock: Bool
    /// The calls running, and whether new ones are taken (see ``shutdown(gracePeriod:)``).
    private let admission = CallAdmission()
    /// The circuits per host, when the configuration has a breaker.
    private let breaker: CircuitBreaker?
    /// The gauges ``recordPoolMetrics(factory:)`` sets.
    private let poolGauges = PoolGauges()

    /// Creates a client around a transport made in code.
    ///
    /// The chain is: `TeamHeadersMiddleware` (when ``ClientConfiguration/headerRules`` has rules),
    /// then `middleware`, then `RetryMiddleware` (when ``ClientConfiguration/retry`` is set), then
    /// the circuit breaker (when ``Resilience/circuitBreaker`` is set), then redirect follow-up
    /// (see ``FollowUp``), the response cache, the bridge, the queue's gate, then
    /// `networkMiddleware` once per attempt, then the transport (see ``chainOrder``).
    /// - Parameters:
    ///   - configuration: Base URL, timeouts, limits, default headers, header rules, retry.
    ///   - transport: The transport.
    ///   - middleware: Application middleware (once per call), in the order requests pass them.
    ///   - networkMiddleware: Network middleware (once per attempt; each must call `next` once).
    ///   - observers: Told about every finished call; ``MetricsExport`` is added when
    ///     ``ClientConfiguration/exportsMetrics`` is on.
    ///   - queue: The default queue for calls whose API object names none; `nil` (the default)
    ///     uses one made from ``ClientConfiguration/queue`` when that is set, or none.
    /// - Throws: ``ConfigurationError`` when a configuration value is out of range, or names a
    ///   transport setting `transport` was not made with (see ``Transport/checkSettings(of:)``).
    public init(
        configuration: ClientConfiguration, transport: any Transport, middleware: [any Middleware] = [],
        networkMiddleware: [any Middleware] = [], observers: [any CallObserver] = [], queue: RequestQueue? = nil
    ) throws(ConfigurationError) {
        try configuration.validate()
        try transport.checkSettings(of: configuration)
        do {
            var fields = try configuration.defaultHeaders.validatedFields(secretNames: configuration.secretHeaderNames)
            // The bridge's advertisement, computed once: a default field, so a call's own
            // Accept-Encoding replaces it (and then gets the raw bytes; see BridgeLink).
            if BridgeLink.advertises(configuration.decompression, transport: transport), fields[.acceptEncoding] == nil {
                fields[.acceptEncoding] = Decompression.acceptEncoding
            }
            defaultFields = fields
        } catch {
            throw ConfigurationError(key: "headers", value: nil, allowed: "valid header names and values: \(error.message)", source: "code")
        }
        configuredBase = configuration.baseURL.map(ParsedBase.init)
        onSystemClock = configuration.timeSource is SystemTimeSource
        let breaker = configuration.resilience.circuitBreaker.map {
            CircuitBreaker(policy: $0, exports: configuration.exportsMetrics)
        }
        let chain = CallChain(
            headerRules: configuration.headerRules, application: middleware, retry: configuration.retry,
            retryBudget: configuration.resilience.retryBudget, breaker: breaker, hedging: configuration.resilience.hedging,
            deadlineHeader: configuration.resilience.deadlineHeaderName, decompression: configuration.decompression,
            network: networkMiddleware, transport: transport)
        self.breaker = breaker
        self.chain = chain
        self.configuration = configuration
        self.transport = transport
        self.middleware = Array(chain.links.prefix(chain.applicationCount))
        self.networkMiddleware = networkMiddleware
        self.observers = configuration.exportsMetrics ? observers + [MetricsExport()] : observers
        if let queue {
            self.queue = queue
        } else if let limits = configuration.queue {
            self.queue = try RequestQueue(limits: limits)
        } else {
            self.queue = nil
        }
    }

    /// The whole chain in the order requests pass it, built-in links included, then the transport:
    /// for example `["TeamHeadersMiddleware", "Logging", "RetryMiddleware", "FollowUpLink",
    /// "QueueGate", "Tracing", "transport curl"]`. Responses come back in reverse.
    public var chainOrder: [String] { CallChain.names(of: chain.links, transport: transport) }

    /// The state of each host's circuit (see ``CircuitBreakerPolicy``), by authority (`host:port`
    /// when the URL names a port); empty without a breaker. For health endpoints and dashboards.
    public var circuitStates: [String: CircuitState] { breaker?.states ?? [:] }

    /// Records ``poolStatus`` as swift-metrics gauges (`courier_queue_running`,
    /// `courier_queue_waiting`, `courier_pool_connections_open`, `courier_pool_connections_opened`,
    /// `courier_pool_transfers`; see the names and dimensions in the documentation of the pool).
    /// Call it from a periodic task or a metrics endpoint's handler: a pool has no event to push on.
    /// - Parameter factory: The metrics backend; `nil` (the default) uses the one bootstrapped in
    ///   `MetricsSystem`.
    public func recordPoolMetrics(factory: (any MetricsFactory)? = nil) {
        poolGauges.record(poolStatus, queueName: queue?.name, factory: factory)
    }

    /// The client's pool at this moment, for health endpoints and dashboards: its default queue's
    /// calls running and waiting per host (when it has a queue), and the transport's connections
    /// (when the transport can tell; see ``Transport/connectionPool``).
    public var poolStatus: PoolStatus {
        PoolStatus(queue: queue?.status, connections: transport.connectionPool)
    }

    /// Creates a client whose transport is chosen by `configuration.transport` from a registry.
    ///
    /// With no transport named, the registry's ``TransportRegistry/defaultName`` is used (curl when
    /// linked), and the choice is logged once at `debug` on the configuration's logger.
    /// - Parameters:
    ///   - configuration: The configuration; see ``ClientConfiguration/load(environment:defaults:)``.
    ///   - registry: The transports to choose from; every transport linked into this program
    ///     (``TransportRegistry/linked``) by default.
    ///   - middleware: Middleware, in the order requests pass them.
    ///   - networkMiddleware: Network middleware (once per attempt).
    ///   - observers: Told about every finished call.
    ///   - queue: The default queue (see the other initialiser).
    /// - Throws: ``ConfigurationError`` for an unknown transport name or a value out of range.
    public convenience init(
        configuration: ClientConfiguration, registry: TransportRegistry = .linked, middleware: [any Middleware] = [],
        networkMiddleware: [any Middleware] = [], observers: [any CallObserver] = [], queue: RequestQueue? = nil
    ) throws {
        let transport = try registry.makeTransport(for: configuration)
        if configuration.transport == nil {
            configuration.logger.debug(
                "courier.transport.chosen",
                metadata: ["courier.transport": "\(transport.name)", "courier.transport.linked": "\(registry.names)"])
        }
        try self.init(
            configuration: configuration, transport: transport, middleware: middleware, networkMiddleware: networkMiddleware,
            observers: observers, queue: queue)
    }

    /// Creates a client for one base URL, on the preferred transport linked into this program
    /// (curl when the target depends on `CourierCurl`; see ``TransportRegistry/preferredNames``),
    /// with every other setting at its default.
    ///
    /// ```swift
    /// let client = try NetworkClient(baseURL: "https://api.example.com")
    /// let user = try await client.get("users/42", as: User.self)
    /// ```
    /// - Parameter baseURL: The base URL calls are relative to.
    /// - Throws: ``ConfigurationError`` when no transport is linked.
    public convenience init(baseURL: String) throws {
        try self.init(configuration: ClientConfiguration(baseURL: baseURL))
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
    ///
    /// The call runs on Swift's global executor, never on the caller's actor: decoding a large
    /// body does not hold that actor up. Inside, Courier's own async functions run where their
    /// caller runs (`nonisolated(nonsending)`), so a call pays for no executor switch but this one.
    @concurrent
    public func response<E: Endpoint>(for endpoint: E) async throws -> DecodedResponse<E.Output> {
        try await perform(CallDescription(endpoint))
    }

    /// Stops the transport at once. Calls running fail, and calls made afterwards fail.
    public func shutdown() async {
        await transport.shutdown()
    }

    /// Shuts down gracefully: takes no new calls (they fail at once as
    /// ``NetworkError/Kind/shutDown``), lets the running calls finish for up to `gracePeriod` on
    /// the configuration's clock, ends those still running then (they fail as
    /// ``NetworkError/Kind/shutDown``), and stops the transport.
    ///
    /// A call counts as running from the start of its network part (waiting in a queue
    /// included) until its whole body has arrived; its decoding finishes either way.
    /// `CourierServiceLifecycle` runs this when a service group shuts down gracefully.
    /// - Parameter gracePeriod: How long running calls may take; zero or less ends them at once.
    public func shutdown(gracePeriod: Duration) async {
        await admission.close(gracePeriod: gracePeriod, on: configuration.timeSource)
        await transport.shutdown()
    }

    /// Whether the client has begun a graceful shutdown and takes no new calls.
    public var isShuttingDown: Bool { admission.isClosed }

    /// Runs one call (see ``perform(_:)``), its failure as a value.
    func execute<Output>(_ call: CallDescription<Output>) async -> Result<DecodedResponse<Output>, NetworkError> {
        do throws(NetworkError) {
            return .success(try await perform(call))
        } catch {
            return .failure(error)
        }
    }

    /// Runs one call: build, middleware and transport under the deadline, status check, decode,
    /// then the log line and the observers. Every failure is a ``NetworkError`` with the metrics
    /// so far. (It throws rather than returning a `Result`: a `Result` of the output's type is one
    /// more type metadata lookup per call, at each level that holds one.)
    func perform<Output>(_ call: CallDescription<Output>) async throws(NetworkError) -> DecodedResponse<Output> {
        guard let queue = call.requestQueue ?? queue else { return try await executeNow(call, placement: nil) }
        let placement = QueuePlacement(queue: queue, priority: call.priority, deduplication: call.deduplication, onStart: call.onStart)
        let membership = CallMembership(tags: call.tags, team: call.team, batch: call.batch)
        let result = await queue.tracking(membership) { () async -> Result<DecodedResponse<Output>, NetworkError> in
            do throws(NetworkError) {
                return .success(try await self.executeNow(call, placement: placement))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One call, in three parts: building the request and finishing (status check, decoding, the
    /// log line and the observers) are synchronous and generic; the network part between them is
    /// asynchronous and not generic. An async function allocates task memory for every local
    /// whose size depends on a generic parameter, so the async part holds none.
    private func executeNow<Output>(
        _ call: CallDescription<Output>, placement: QueuePlacement?
    ) async throws(NetworkError) -> DecodedResponse<Output> {
        let start = now()
        let recorder = TransferRecorder(transport: transport.name)
        let requestID = Self.makeRequestID()
        // The request id goes into the logger's metadata only when a line is logged: copying a
        // logger to add it costs allocations on every call.
        let logger = call.logger ?? configuration.logger
        let exchange: Exchange
        switch build(call) {
        case .success(let built):
            exchange = await network(
                built.request, built.body, ownHeaderNames: built.ownHeaderNames, placement: placement, team: call.team,
                endpointName: call.endpointName, timeout: call.timeout ?? configuration.requestTimeout, httpVersion: call.httpVersion,
                cachePolicy: call.cachePolicy ?? configuration.cachePolicy, requestID: requestID,
                logger: logger, recorder: recorder, start: start)
        case .failure(let error):
            exchange = .failed(error, sent: nil)
        }
        return try finish(call, exchange, requestID: requestID, logger: logger, recorder: recorder, start: start)
    }

    /// What a call's network part ended with (not generic: see ``executeNow(_:placement:)``).
    enum Exchange {
        /// A response head and its whole body, for `sent`; the network part began at `networkStart`.
        case received(HTTPResponse, Data, sent: HTTPRequest, networkStart: Moment)
        /// The call failed; `sent` is `nil` when it failed before its request was built.
        case failed(NetworkError, sent: HTTPRequest?)
    }

    /// The configuration's clock, now.
    func now() -> Moment {
        onSystemClock ? Moment.now() : Moment.now(on: configuration.timeSource)
    }

    /// The call's request, or why it cannot be built.
    @inline(never)
    func build<Output>(
        _ call: CallDescription<Output>
    ) -> Result<(request: HTTPRequest, body: RequestBody?, ownHeaderNames: Set<HTTPField.Name>), NetworkError> {
        Result { () throws(NetworkError) in
            try RequestBuilder.build(call, configuration: configuration, defaultFields: defaultFields, configuredBase: configuredBase)
        }
    }

    /// The network part of a buffered call: the call opened (see ``open(_:_:ownHeaderNames:placement:team:endpointName:timeout:httpVersion:cachePolicy:requestID:logger:recorder:start:streams:)``),
    /// then its whole body read under the same deadline, then the call closed.
    private func network(
        _ request: HTTPRequest, _ body: RequestBody?, ownHeaderNames: Set<HTTPField.Name>, placement: QueuePlacement?, team: String?,
        endpointName: String?, timeout: Duration, httpVersion: HTTPVersionPreference?, cachePolicy: CachePolicy, requestID: String,
        logger: Logger, recorder: TransferRecorder, start: Moment
    ) async -> Exchange {
        let opened: OpenedCall
        do throws(NetworkError) {
            opened = try await open(
                request, body, ownHeaderNames: ownHeaderNames, placement: placement, team: team, endpointName: endpointName,
                timeout: timeout, httpVersion: httpVersion, cachePolicy: cachePolicy, requestID: requestID, logger: logger,
                recorder: recorder, start: start, streams: false)
        } catch {
            return .failed(error, sent: request)
        }
        let scope = opened.scope
        defer { scope.close() }
        do {
            let response = opened.response
            recorder.enter(.receiving)
            let data: Data
            if let buffered = try response.body.bufferedBytes(upTo: scope.maxResponseBytes) {
                data = buffered
            } else {
                data = try await response.body.collect(upTo: scope.maxResponseBytes)
            }
            scope.disarm()
            return .received(response.head, data, sent: request, networkStart: scope.networkStart)
        } catch {
            scope.disarm()
            return .failed(scope.failure(error), sent: request)
        }
    }

    /// Opens a call: its context and deadline, its place among the running calls, and the chain
    /// up to the response head. The scope it returns holds all of that until it is closed, after
    /// the body (buffered calls read it at once; streamed calls hand it to the caller).
    /// - Throws: ``NetworkError`` (the call is closed already).
    func open(
        _ request: HTTPRequest, _ body: RequestBody?, ownHeaderNames: Set<HTTPField.Name>, placement: QueuePlacement?, team: String?,
        endpointName: String?, timeout: Duration, httpVersion: HTTPVersionPreference?, cachePolicy: CachePolicy, requestID: String,
        logger: Logger, recorder: TransferRecorder, start: Moment, streams: Bool
    ) async throws(NetworkError) -> OpenedCall {
        let time = configuration.timeSource
        var context = RequestContext(
            requestID: requestID, team: team, deadlineMoment: start.advanced(by: timeout), connectTimeout: configuration.connectTimeout,
            maxResponseBytes: configuration.maxResponseBytes, maxRedirects: configuration.maxRedirects,
            secretHeaderNames: configuration.secretHeaderNames, logger: logger, recorder: recorder, httpVersion: httpVersion)
        context.addsRequestID = true
        context.clock = time
        let signal = CallDeadline()
        guard let slot = admission.enter(signal) else {
            throw NetworkError(
                kind: .shutDown, phase: .building, message: "the client is shutting down and takes no new calls; nothing was sent")
        }
        context.deadlineSignal = signal
        context.responseHeadLimits = configuration.responseHeadLimits
        context.placement = placement
        context.cache = configuration.cache
        context.cachePolicy = cachePolicy
        context.ownHeaderNames = ownHeaderNames
        context.endpointName = endpointName
        context.streamsBody = streams
        context.retryLedger = chain.ledger
        context.resendsUnsent = configuration.resilience.retriesUnsentRequests
        // The phase moves on before anything else, so a deadline that strikes before the transport
        // runs does not report the call as still being built.
        recorder.update(entering: placement == nil ? .sending : .queued) { $0.bytesSent = body?.length ?? 0 }
        if logger.logLevel <= .trace { Self.traceStart(request, context: context, logger: logger) }

        let networkStart = now()
        // One deadline for everything under the call: queue waiting, attempts, hops, backoff, and
        // the body until the caller has read it.
        let alarm = Deadline.arm(signal, at: context.deadlineMoment, on: onSystemClock ? nil : time, now: networkStart)
        let scope = CallScope(
            signal: signal, slot: slot, admission: admission, alarm: alarm, time: time, timeout: timeout, recorder: recorder,
            networkStart: networkStart, maxResponseBytes: context.maxResponseBytes)
        do {
            return OpenedCall(response: try await chain.run(request, body, context), scope: scope)
        } catch {
            scope.disarm()
            let failure = scope.failure(error)
            scope.close()
            throw failure
        }
    }

    @inline(never)
    private static func traceStart(_ request: HTTPRequest, context: RequestContext, logger: Logger) {
        RequestContext.logger(logger, taggedWith: context.requestID).trace(
            "courier.call.started",
            metadata: [
                "courier.method": .string(request.method.rawValue),
                "courier.url": .string(Redaction.redactedURL(request.urlText)),
                "courier.headers": .string(Redaction.redactedHeaders(request.headerFields, extraSecretNames: context.secretHeaderNames)),
            ])
    }

    /// The call's result from its exchange (status check, decoding, the metrics), logged and told
    /// to the observers. Only decoding and the result depend on `Output`; the rest is in plain
    /// functions, so the output's type metadata is looked up once here.
    @inline(never)
    func finish<Output>(
        _ call: CallDescription<Output>, _ exchange: consuming Exchange, requestID: String, logger: Logger,
        recorder: TransferRecorder, start: Moment
    ) throws(NetworkError) -> DecodedResponse<Output> {
        let ending = CallEnding(requestID: requestID, logger: logger, recorder: recorder, start: start)
        /// The call's failure, completed, logged and told to the observers.
        func fail(_ error: NetworkError, sent: HTTPRequest?) -> NetworkError {
            concluded(error, sent: sent, call: call, ending)
        }
        switch consume exchange {
        case .failed(let error, let sent):
            throw fail(error, sent: sent)
        case .received(let head, let data, let sent, let networkStart):
            let status = head.status
            // Checking the status reads nothing the recorder holds: the call enters decoding
            // right away when the status is accepted (one lock instead of two).
            let acceptable = call.statusValidation.isAcceptable(status.code)
            // The network part ends where decoding starts: one clock read for both.
            let decodeStart = now()
            recorder.update(entering: acceptable ? .decoding : .validating) {
                $0.network = networkStart.duration(to: decodeStart)
                $0.bytesReceived = Int64(data.count)
            }
            if configuration.logsResponseBodies, logger.logLevel <= .trace { Self.traceBody(data, status: status, ending) }
            guard acceptable else {
                throw fail(refused(status, data: data, errorDecoder: call.errorDecoder), sent: sent)
            }
            let value: Output
            do {
                value = try call.decoder.decode(data, head)
            } catch {
                let end = now()
                recorder.update { $0.decode = decodeStart.duration(to: end) }
                throw fail(Self.decodingFailure(error, of: Output.self, status: status.code, data: data), sent: sent)
            }
            let end = now()
            let metrics = recorder.updated {
                $0.decode = decodeStart.duration(to: end)
                $0.total = start.duration(to: end)
            }
            report(status: status.code, metrics: metrics, of: call, ending, authority: sent.authority)
            return DecodedResponse(value: value, head: head, metrics: metrics)
        }
    }

    /// What finishing a call needs besides its description and its exchange.
    struct CallEnding {
        let requestID: String
        let logger: Logger
        let recorder: TransferRecorder
        let start: Moment
    }

    /// `error` with the request (`sent` once built, else the call's method and URL as described)
    /// and the metrics so far.
    func failed<Output>(
        _ error: NetworkError, sent: HTTPRequest?, unsent call: CallDescription<Output>, _ ending: CallEnding
    ) -> NetworkError {
        var error = error
        if error.request == nil {
            error.request =
                if let sent {
                    NetworkError.RequestSummary(method: sent.method.rawValue, url: sent.urlText)
                } else {
                    NetworkError.RequestSummary(
                        method: call.method.rawValue, url: (call.baseURL ?? configuration.baseURL ?? "") + "/" + call.path)
                }
        }
        let end = now()
        error.metrics = ending.recorder.updated { $0.total = ending.start.duration(to: end) }
        return error
    }

    /// The failure for a status the call does not accept, with the start of the body and the
    /// error decoder's reading of it.
    func refused(_ status: HTTPResponse.Status, data: Data, errorDecoder: ErrorBodyDecoder?) -> NetworkError {
        var error = NetworkError(
            kind: .httpStatus, phase: .validating, message: "the server answered \(status.code) \(status.reasonPhrase)", status: status.code
        )
        error.responseBody = data.prefix(NetworkError.maximumRetainedBodyBytes)
        error.decodedErrorBody = errorDecoder?.decode(data)
        return error
    }

    /// The failure for a decoder that threw `error`: a ``NetworkError`` it threw chose the call's
    /// error (a SOAP fault is one); anything else is a decoding failure.
    private static func decodingFailure(_ error: any Error, of output: Any.Type, status: Int, data: Data) -> NetworkError {
        var failure =
            error as? NetworkError
            ?? NetworkError(
                kind: .decoding, phase: .decoding, message: "the body could not be decoded as \(output): \(error)", status: status,
                underlying: error)
        failure.status = failure.status ?? status
        failure.responseBody = failure.responseBody ?? data.prefix(NetworkError.maximumRetainedBodyBytes)
        return failure
    }

    @inline(never)
    private static func traceBody(_ data: Data, status: HTTPResponse.Status, _ ending: CallEnding) {
        RequestContext.logger(ending.logger, taggedWith: ending.requestID).trace(
            "courier.response.body",
            metadata: ["courier.status": .stringConvertible(status.code), "courier.body": .string(bodyExcerpt(data))])
    }

    /// Logs a success and tells the observers.
    func report<Output>(
        status: Int, metrics: RequestMetrics, of call: CallDescription<Output>, _ ending: CallEnding, authority: String?
    ) {
        if ending.logger.logLevel <= .debug {
            var metadata: Logger.Metadata = [
                "courier.status": .stringConvertible(status), "courier.attempts": .stringConvertible(metrics.attempts),
                "courier.duration_ms": .stringConvertible(metrics.total?.wholeMilliseconds ?? 0),
            ]
            if let name = call.endpointName { metadata["courier.endpoint"] = .string(name) }
            RequestContext.logger(ending.logger, taggedWith: ending.requestID).debug("courier.call.succeeded", metadata: metadata)
        }
        notify(status: status, error: nil, metrics: metrics, of: call, ending, authority: authority)
    }

    /// Logs a failure (one fixed message per outcome) and tells the observers.
    func report<Output>(_ failure: NetworkError, of call: CallDescription<Output>, _ ending: CallEnding, authority: String?) {
        let metrics = failure.metrics ?? RequestMetrics(transport: transport.name)
        let level = failure.kind == .cancelled ? Logger.Level.debug : configuration.failureLogLevel
        if ending.logger.logLevel <= level {
            var metadata: Logger.Metadata = [
                "courier.error": .string(failure.shortDescription), "courier.phase": .string(failure.phase.description),
                "courier.status": .stringConvertible(failure.status ?? 0),
                "courier.request": .string(failure.request?.description ?? ""),
                "courier.attempts": .stringConvertible(metrics.attempts),
                "courier.duration_ms": .stringConvertible(metrics.total?.wholeMilliseconds ?? 0),
            ]
            if let name = call.endpointName { metadata["courier.endpoint"] = .string(name) }
            RequestContext.logger(ending.logger, taggedWith: ending.requestID).log(
                level: level, failure.kind == .cancelled ? "courier.call.cancelled" : "courier.call.failed", metadata: metadata)
        }
        notify(status: failure.status, error: failure, metrics: metrics, of: call, ending, authority: authority)
    }

    /// Tells the observers about a finished call.
    private func notify<Output>(
        status: Int?, error: NetworkError?, metrics: RequestMetrics, of call: CallDescription<Output>, _ ending: CallEnding,
        authority: String?
    ) {
        guard !observers.isEmpty else { return }
        let record = CallRecord(
            requestID: ending.requestID,
            endpoint: call.endpointName.map { EndpointLabels.shared.label(named: $0) } ?? EndpointLabels.shared.label(for: call.apiType),
            team: call.team,
            method: call.method.rawValue, host: authority ?? "", status: status, error: error, metrics: metrics)
        for observer in observers { observer.callFinished(record) }
    }

    /// The first 1 KiB of a body for trace logs, as text when it is UTF-8.
    static func bodyExcerpt(_ data: Data) -> String {
        let limit = 1024
        let prefix = data.prefix(limit)
        let text = String(decoding: prefix, as: UTF8.self)
        return data.count > limit ? text + "… (\(data.count) bytes)" : text
    }

    /// A process-unique id: a random prefix drawn once per process, then a counter, both in
    /// lowercase base 32 (`0`–`9`, `a`–`v`): for example `k3v09qbm-1f`. Cheaper than a UUID per
    /// call, and still unique across processes for log correlation (40 random bits). Up to the
    /// 2^30th call of a process the id is at most 15 bytes, which Swift stores inline in the
    /// `String`: making it allocates nothing.
    static func makeRequestID() -> String {
        let number = requestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let prefix = requestIDPrefix
        let digits = max(1, (UInt64.bitWidth - number.leadingZeroBitCount + 4) / 5)
        return String(unsafeUninitializedCapacity: 8 + 1 + digits) { buffer in
            var index = 0
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer[index] = UInt8(truncatingIfNeeded: prefix >> UInt64(shift))
                index += 1
            }
            buffer[index] = UInt8(ascii: "-")
            index += 1
            for shift in stride(from: (digits - 1) * 5, through: 0, by: -5) {
                buffer[index] = base32Digit(UInt8((number >> UInt64(shift)) & 0x1F))
                index += 1
            }
            return index
        }
    }

    private static func base32Digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Eight base-32 digits drawn once per process, as ASCII bytes packed into one integer (the
    /// first digit in the top byte): copied without an array's generic path.
    private static let requestIDPrefix: UInt64 = {
        let random = UInt64.random(in: 0..<(1 << 40))
        return (0..<8).reversed().reduce(0) { packed, position in
            packed << 8 | UInt64(base32Digit(UInt8((random >> UInt64(position * 5)) & 0x1F)))
        }
    }()
    private static let requestCounter = Atomic<UInt64>(0)
}
