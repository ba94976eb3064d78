import Logging

/// Everything a ``NetworkClient`` is built from.
///
/// Set it in code, or load it with ``load(environment:defaults:)``, which reads a JSON file
/// named by `COURIER_CONFIG` and the `COURIER_TRANSPORT` variable. Values are checked by
/// ``validate(source:)``; every default is finite.
public struct ClientConfiguration: Sendable {
    /// The transport's registered name: `curl`, `ahc`, `urlsession` or `mock`. `nil`, the default,
    /// picks the first of ``TransportRegistry/preferredNames`` the registry has: `curl` when the
    /// program links it, then `ahc`, and `urlsession` only when it is the only one.
    public var transport: String?
    /// The base URL API objects use when they do not name their own.
    ///
    /// A URL that names a Unix socket, `http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.41`, becomes
    /// `http://localhost/v1.41` with the socket in ``connectionOverrides``.
    public var baseURL: String? {
        didSet {
            (baseURL, connectionOverrides.unixSocket, socketFromBaseURL) = Self.reading(
                baseURL, socket: connectionOverrides.unixSocket, fromBase: socketFromBaseURL)
        }
    }
    /// Whether ``ConnectionOverrides/unixSocket`` came from the base URL: a later base URL that
    /// names no socket then takes it away.
    private var socketFromBaseURL = false

    /// A base URL as written, read: a Unix socket URL becomes `http://localhost/…` and the socket;
    /// any other URL leaves the socket as it was, unless the socket came from the base URL before.
    private static func reading(_ url: String?, socket: String?, fromBase: Bool) -> (String?, String?, Bool) {
        if let url, let (path, base) = ConnectionOverrides.unixSocketBase(url) { return (base, path, true) }
        return (url, fromBase ? nil : socket, false)
    }
    /// The longest one call may take, from start to decoded result: 60 seconds by default.
    public var requestTimeout: Duration = .seconds(60)
    /// The longest a transport may take to connect: 10 seconds by default.
    public var connectTimeout: Duration = ClientConfiguration.defaultConnectTimeout
    /// The default of ``connectTimeout``: 10 seconds.
    public static let defaultConnectTimeout: Duration = .seconds(10)
    /// The largest response body a buffered call accepts, counted after decoding: 16 MiB by
    /// default. A body that grows past it fails as ``NetworkError/Kind/responseTooLarge`` as soon
    /// as it does, so an endless body never holds more than this. Raise it per client, or stream
    /// bigger bodies.
    public var maxResponseBytes: Int = ClientConfiguration.defaultMaxResponseBytes
    /// The default of ``maxResponseBytes``: 16 MiB.
    public static let defaultMaxResponseBytes = 16 * 1024 * 1024
    /// How compressed response bodies are advertised and decoded: gzip and deflate, at most 100
    /// decoded bytes per received byte, two codings. See ``Decompression``.
    public var decompression = Decompression()
    /// The most a response head may hold: 100 fields, 64 KiB, 10 interim responses by default.
    public var responseHeadLimits = ResponseHeadLimits()
    /// The most redirects followed: 10 by default.
    public var maxRedirects: Int = 10
    /// Further header names whose values are credentials, beyond ``CredentialScope/standardNames``
    /// (`Authorization`, `Cookie`, `X-Api-Key`, ...): redacted, never sent to another origin, and
    /// part of the cache's and de-duplication's keys (see ``CredentialScope``). Lowercase.
    public var secretHeaderNames: Set<String> = [] {
        // Compared with lowercase field names everywhere: kept lowercase however they are written.
        didSet {
            if secretHeaderNames.contains(where: CredentialScope.hasUppercase) {
                secretHeaderNames = Set(secretHeaderNames.map { $0.lowercased() })
            }
        }
    }
    /// Headers added to every request (an API object's own header of the same name wins).
    public var defaultHeaders: RequestHeaders = [:]
    /// How the client writes and reads JSON (dates and keys): its one encoder and decoder, used
    /// unless an endpoint or a call brings its own (see ``JSONCoding``).
    public var json = JSONCoding()
    /// The logger calls use: by default one labelled `courier` from the service's logging backend
    /// (swift-log's `LoggingSystem.bootstrap`; standard error at `info` when the service bootstrapped
    /// none), so a failing call is never silent. An API object may bring its own (`logger`); give
    /// `Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })` for none.
    ///
    /// Until one is set, the default is made when this is read: a configuration made before the
    /// service bootstraps swift-log still logs to the backend the service chose. A client reads it
    /// once, when it is made. Changing it in place (`configuration.logger.logLevel = .debug`, or its
    /// metadata) sets it, to a logger made then: do that after the bootstrap.
    public var logger: Logger {
        get { chosenLogger ?? Logger(label: "courier") }
        set { chosenLogger = newValue }
    }
    /// The logger set in code, if any (see ``logger``).
    private var chosenLogger: Logger?
    /// The level failed calls are logged at: `warning` by default, so a failing call in a new
    /// service prints one redacted line in its normal log. Successful and cancelled calls are
    /// logged at `debug`. Set `debug` to leave failures to the caller, or `error` for louder.
    public var failureLogLevel: Logger.Level = .warning
    /// Whether a buffered call's response body (its first KiB) is logged at `trace` as
    /// `courier.response.body`: `false` by default, since bodies carry tokens (an OAuth token
    /// answer) and personal data that no log level should leak. Turn it on in code, for a
    /// debugging session.
    public var logsResponseBodies = false
    /// Header rules per team, host and path prefix (see ``HeaderRule`` and `TeamHeadersMiddleware`);
    /// none by default.
    public var headerRules: [HeaderRule] = []
    /// The retry policy, or `nil` for no retries (the default). See ``RetryPolicy``.
    public var retry: RetryPolicy?
    /// The retry budget and the circuit breaker (see ``Resilience``).
    public var resilience = Resilience()
    /// Whether every call is exported to swift-metrics (see ``MetricsExport``); `true` by default.
    /// Without a bootstrapped metrics backend this records nothing.
    public var exportsMetrics = true
    /// Where timings and time windows read the time; the system clock by default. Tests use a
    /// ``ManualTimeSource``.
    public var timeSource: any TimeSource = SystemTimeSource()
    /// Limits for the client's default ``RequestQueue``, or `nil` (the default) for no default
    /// queue: calls then start at once, bounded only by the transport's connection limits.
    public var queue: RequestQueue.Limits?

    /// The HTTP version to ask for: `.http1_1`, `.http2` (over TLS where the server offers it)
    /// or `.http2PriorKnowledge` (cleartext). `nil`, the default, keeps the transport's own
    /// (HTTP/2 where TLS negotiates it). A call can still ask for its own version.
    public var httpVersion: HTTPVersionPreference?
    /// How calls use the response cache (`cache`, with `CourierCache`) unless they say otherwise
    /// (``Endpoint/cachePolicy``);
    /// ``CachePolicy/useProtocol`` by default.
    public var cachePolicy: CachePolicy = .useProtocol
    /// The most connections the transport keeps open in all; `nil` keeps its default.
    public var maxConnections: Int?
    /// The most connections to one host; `nil` keeps the transport's default.
    public var maxConnectionsPerHost: Int?
    /// How long a transfer may go without receiving a byte before it fails as
    /// ``NetworkError/Kind/timedOut``; `nil` keeps the transport's default
    /// (``defaultStallTimeout`` for the built-in ones). Downloads, event streams and JSON Lines are
    /// bounded by it once their head is in, not by ``requestTimeout`` (see
    /// ``NetworkClient/bodyStallLimit``).
    public var stallTimeout: Duration?
    /// The stall limit when neither ``stallTimeout`` nor the transport names one: 30 seconds, the
    /// default of the core and of every built-in transport.
    public static let defaultStallTimeout: Duration = .seconds(30)
    /// Extra trusted roots, a client certificate, a public key pin.
    public var tls = TLSSettings()
    /// The forward proxy calls go through; ``ProxyConfiguration/none`` (every call direct,
    /// whatever the environment says) by default. URLSession cannot be told to ignore the
    /// environment's proxy variables: with one set, it refuses `none` (see its documentation).
    public var proxy = ProxyConfiguration.none
    /// The wings' settings (the cookie jar's, for one), behind the properties each wing's module
    /// adds to the configuration; empty by default (see ``Wing``).
    package var wings = WingSettings()
    /// A Unix socket every call connects to, and addresses some host names connect to instead;
    /// none by default.
    public var connectionOverrides = ConnectionOverrides.none

    /// The allowed range of ``requestTimeout``.
    public static let requestTimeoutRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(24 * 3600)
    /// The allowed range of ``connectTimeout``.
    public static let connectTimeoutRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(3600)
    /// The allowed range of ``maxResponseBytes`` (1 byte to 16 GiB).
    public static let maxResponseBytesRange: ClosedRange<Int> = 1...(16 << 30)
    /// The allowed range of ``maxRedirects``.
    public static let maxRedirectsRange: ClosedRange<Int> = 0...50

    /// A configuration with every default.
    public init() {}

    /// A configuration with a base URL and a transport name, every other value at its default.
    /// - Parameters:
    ///   - baseURL: The base URL.
    ///   - transport: The transport's name; `nil` (the default) picks the preferred linked one
    ///     (see ``transport``).
    public init(baseURL: String?, transport: String? = nil) {
        self.transport = transport
        // (An initializer's assignment skips the property's observer: the same reading here.)
        (self.baseURL, connectionOverrides.unixSocket, socketFromBaseURL) = Self.reading(baseURL, socket: nil, fromBase: false)
    }

    /// Checks every value: each key's range, from the key table (``ConfigurationKey/all``, the one
    /// place ranges are written), then what ranges cannot say (values that depend on one another,
    /// files, pins, overrides).
    /// - Parameter source: Where the values came from, for the error.
    /// - Throws: ``ConfigurationError`` naming the first key whose value is not allowed.
    public func validate(source: String = "code") throws(ConfigurationError) {
        try ConfigurationKey.checkBounds(of: self, source: source)
        try validateTransportSettings(source: source)
        try retry?.checkRelations(source: source)
        try queue?.checkRelations(source: source)
        try resilience.checkRelations(source: source)
    }
}
