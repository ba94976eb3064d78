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
    let chain: LinkChain
    /// The context every call starts from: the configuration's limits, credential names, clock,
    /// logger and cache policy, and the chain's internals, gathered once (see ``Call``).
    let callTemplate: RequestContext
    /// The configuration's default headers, validated once.
    let defaultFields: HTTPFields
    /// The configuration's base URL, parsed once (a bad one fails each call that uses it).
    let configuredBase: ParsedBase?
    /// Whether the configuration's clock is the system clock, decided once (a dynamic cast per
    /// call showed in profiles): its alarms go straight to the shared watch.
    let onSystemClock: Bool
    /// The calls running, and whether new ones are taken (see ``shutdown(gracePeriod:)``).
    let admission = CallAdmission()
    /// The gauges ``recordPoolMetrics(factory:)`` sets.
    let poolGauges = PoolGauges()
    /// What each wing that the configuration turns on keeps for this client (the cookie jar), by
    /// the wing's type (see ``wingValue(_:)``).
    let wingValues: [(wing: ObjectIdentifier, value: any Sendable)]
    /// The longest a long transfer's body (a download, an event stream, JSON Lines) may go without
    /// a byte before it fails as ``NetworkError/Kind/timedOut``: the configuration's
    /// ``ClientConfiguration/stallTimeout``, else the transport's own limit
    /// (``Transport/stallLimit``), else ``ClientConfiguration/defaultStallTimeout``. Decided once,
    /// when the client is made.
    public let bodyStallLimit: Duration
    /// The client's JSON decoder, made once from ``ClientConfiguration/json``: automatic decoding,
    /// ``ResponseDecoder/json(_:)`` and ``ErrorBodyDecoder/json(_:decoder:)`` without a decoder of
    /// their own, JSON Lines and `ServerSentEvents.decode(_:as:)` read with it.
    public let jsonDecoder: JSONDecoder
    /// The client's JSON encoder, made once from ``ClientConfiguration/json``: a
    /// ``RequestBody/json(_:encoder:)-(_,JSONEncoder?)`` without an encoder of its own is written with it.
    public let jsonEncoder: JSONEncoder

    /// Creates a client around a transport made in code.
    ///
    /// The chain is: `TeamHeadersMiddleware` (when ``ClientConfiguration/headerRules`` has rules),
    /// then `middleware`, then `RetryMiddleware` (when ``ClientConfiguration/retry`` is set), then
    /// the circuit breaker and hedging of `CourierResilience` (when ``Resilience/circuitBreaker``
    /// or ``Resilience/hedging`` is set), then redirect follow-up
    /// (see ``FollowUp``), the wings' links around each hop (the cookie jar of `CourierCookies`,
    /// then the response cache of `CourierCache`, when configured), the bridge, the queue's gate, then
    /// `networkMiddleware` once per attempt, then the transport (see ``linkOrder``).
    /// - Parameters:
    ///   - configuration: Base URL, timeouts, limits, default headers, header rules, retry.
    ///   - transport: The transport.
    ///   - middleware: Application middleware (once per call), in the order requests pass them.
    ///   - networkMiddleware: Network middleware (once per attempt; each must call `next` once).
    ///   - observers: Told about every finished call; ``MetricsExport`` is added when
    ///     ``ClientConfiguration/exportsMetrics`` is on.
    ///   - queue: The default queue for calls whose API object names none; `nil` (the default)
    ///     uses one made from ``ClientConfiguration/queue`` when that is set, or none.
    /// - Throws: ``ConfigurationError`` when a configuration value is out of range, names a
    ///   transport setting `transport` was not made with (see ``Transport/checkSettings(of:)``), or
    ///   turns on a wing `transport` cannot carry out (cookies on a transport that joins repeated
    ///   response fields), or sets a policy whose wing this program does not link (a circuit
    ///   breaker or hedging without `CourierResilience`).
    public init(
        configuration: ClientConfiguration, transport: any Transport, middleware: [any Middleware] = [],
        networkMiddleware: [any Middleware] = [], observers: [any CallObserver] = [], queue: RequestQueue? = nil
    ) throws(ConfigurationError) {
        try configuration.validate()
        try transport.checkSettings(of: configuration)
        // The logger is made once, now (after the service's logging bootstrap, whenever the
        // configuration was made), and is the one `configuration.logger` reads from here on.
        var configuration = configuration
        configuration.logger = configuration.logger
        do {
            var fields = try configuration.defaultHeaders.validatedFields(secretNames: configuration.secretHeaderNames)
            // The bridge's advertisement, computed once: a default field, so a call's own
            // Accept-Encoding replaces it (and then gets the raw bytes; see BridgeLink).
            if BridgeLink.advertises(configuration.decompression, transport: transport), fields[.acceptEncoding] == nil {
                fields[.acceptEncoding] = Decompression.acceptEncoding
            }
            defaultFields = fields
        } catch {
            throw ConfigurationError(
                key: ConfigurationKey.headers.name, value: nil, allowed: "valid header names and values: \(error.message)", source: "code")
        }
        configuredBase = configuration.baseURL.map(ParsedBase.init)
        onSystemClock = configuration.timeSource is SystemTimeSource
        // Retry, hedging and the resend of unsent attempts draw from one budget per host.
        let ledger = RetryBudgetLedger(budget: configuration.resilience.retryBudget)
        // The wings linked into this program, each asked once what it adds (see `Wing`); a setting
        // whose wing is not linked is refused.
        try Self.requireWings(for: configuration)
        var outer: [any Middleware] = []
        var hops: [any Middleware] = []
        var wingValues: [(wing: ObjectIdentifier, value: any Sendable)] = []
        let setup = WingSetup(
            configuration: configuration, transport: transport, hasNetworkMiddleware: !networkMiddleware.isEmpty, ledger: ledger)
        for wing in linkedWings {
            guard let parts = try wing.parts(for: setup) else { continue }
            outer += parts.outer
            if let hop = parts.hop { hops.append(hop) }
            if let value = parts.value { wingValues.append((ObjectIdentifier(wing), value)) }
        }
        self.wingValues = wingValues
        let jsonEncoder = configuration.json.makeEncoder()
        self.jsonEncoder = jsonEncoder
        let chain = LinkChain(
            configuration: configuration, application: middleware, network: networkMiddleware, transport: transport, ledger: ledger,
            wingOuter: outer, hops: hops, jsonEncoder: jsonEncoder)
        self.chain = chain
        callTemplate = RequestContext(
            template: configuration,
            internals: LinkContext(
                placement: nil, retryLedger: chain.ledger,
                resendsUnsent: configuration.resilience.retriesUnsentRequests, bodyReading: .whole, logger: configuration.logger))
        self.configuration = configuration
        self.transport = transport
        jsonDecoder = configuration.json.makeDecoder()
        bodyStallLimit = configuration.stallTimeout ?? transport.stallLimit ?? ClientConfiguration.defaultStallTimeout
        self.middleware = chain.outer
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
    public var linkOrder: [String] { chain.names(transport: transport) }

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
        try await perform(Call(endpoint, on: self), decoder: endpoint.decoder)
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

    /// Runs one call (see ``perform(_:decoder:)``), its failure as a value.
    func execute<Output>(_ call: Call, decoder: ResponseDecoder<Output>) async -> Result<DecodedResponse<Output>, NetworkError> {
        do throws(NetworkError) {
            return .success(try await perform(call, decoder: decoder))
        } catch {
            return .failure(error)
        }
    }

    /// Runs one buffered call, in its queue when it has one: the network part (see
    /// ``Call/readWhole()``), then the status check, decoding, the log line and the observers.
    /// Every failure is a ``NetworkError`` with the metrics so far. (It throws rather than
    /// returning a `Result`: a `Result` of the output's type is one more type metadata lookup per
    /// call, at each level that holds one.)
    func perform<Output>(_ call: Call, decoder: ResponseDecoder<Output>) async throws(NetworkError) -> DecodedResponse<Output> {
        guard call.context.placement != nil else { return try call.finish(await call.readWhole(), decoder: decoder) }
        return try await call.tracked { () async throws(NetworkError) in try call.finish(await call.readWhole(), decoder: decoder) }
    }

    /// The configuration's clock, now.
    package func now() -> Moment {
        onSystemClock ? Moment.now() : Moment.now(on: configuration.timeSource)
    }
}
