import HTTPTypes

/// Performs the I/O for one fully built request, and nothing else.
///
/// Use `Transport` to plug an HTTP stack into Courier (Courier ships `MockTransport`,
/// `URLSessionTransport`, and more as separate modules). To change requests or responses for
/// every call (headers, logging, retry), write a ``Middleware`` instead.
///
/// Implementing a transport:
/// - `send` receives a request whose URL is already resolved and whose headers are already
///   validated: send it as it is (`scheme`, `authority` and `path` of the `HTTPRequest`).
/// - Return as soon as the response head arrives, with the body as a ``ResponseBody`` stream;
///   stop the transfer when the body stream is terminated by its consumer.
/// - Honour Task cancellation and the call's deadline promptly, in every phase, and stop any work
///   they leave behind: bridge both at each wait with
///   ``RequestContext/withCancellationHandler(_:onCancel:)``, tie a transfer's lifetime to the
///   deadline with ``RequestContext/onDeadline(_:)``, or run a library that only Task cancellation
///   stops under ``RequestContext/interruptible(_:)``. The deadline is the client's (one alarm on
///   ``RequestContext/clock``); ``RequestContext/remaining`` may go to the library as a backstop.
/// - Report failures as ``NetworkError`` with the most precise kind and phase, keeping the native
///   code and message; never crash on anything a server sends.
/// - Report the current phase and what you measure through `context.recorder`.
/// - Do exactly one exchange: never follow a redirect. Return a 3xx response as it came; the
///   chain's follow-up link decides where to go next (see ``FollowUp``).
/// - Be `Sendable`: `send` is called from many tasks at once.
public protocol Transport: Sendable {
    /// The name the transport is registered under (`mock`, `urlsession`, `curl`, `ahc`).
    var name: String { get }

    /// Sends one request and returns the response head with a streamed body.
    ///
    /// - Parameters:
    ///   - request: The request head, with its final URL and headers.
    ///   - body: The body to send, or `nil` for none.
    ///   - context: The call's deadline, limits, logger and recorder.
    /// - Returns: The response head and its body.
    /// - Throws: A ``NetworkError``, or `CancellationError` when cancelled.
    func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse

    /// Whether the transport's own library always decodes `gzip` and `deflate` bodies and cannot
    /// be told not to (URLSession). Then the chain's bridge advertises nothing itself, decodes
    /// nothing again, and only enforces its limits on what the transport delivers. The default
    /// is `false`: the transport returns the bytes as they came, and Courier decodes them.
    var decodesContentCodings: Bool { get }

    /// The transport's connections now, when it can tell (see ``ConnectionPoolSnapshot``); `nil`
    /// (the default) when its library does not expose them.
    var connectionPool: ConnectionPoolSnapshot? { get }

    /// How long this transport lets a transfer go without a byte, when it has such a limit of its
    /// own; `nil` (the default) when it has none. A client whose configuration names no
    /// ``ClientConfiguration/stallTimeout`` bounds long transfers' bodies by it
    /// (``NetworkClient/bodyStallLimit``), so the core never cuts a body sooner than the transport
    /// was told to.
    var stallLimit: Duration? { get }

    /// Whether the transport hands over a response's repeated fields joined into one, comma
    /// separated (FoundationNetworking does so for every field, `Set-Cookie` too). A cookie jar
    /// cannot read such answers apart safely (a cookie's value may hold a comma), so a client
    /// refuses to keep cookies on it. `false` by default.
    var joinsRepeatedResponseFields: Bool { get }

    /// The transport settings this transport runs with, in the core's terms (see
    /// ``TransportSettings``); `nil` (the default) for a transport that reads none.
    var runningSettings: TransportSettings? { get }

    /// The keys of ``TransportSettings`` this transport carries out
    /// (``TransportSettings/allKeys``, or some of them); none by default.
    var honouredSettingKeys: Set<String> { get }

    /// Checks that this transport carries out the client configuration's transport settings
    /// (``ClientConfiguration/transportSettingKeys``: HTTP version, connection limits, stall
    /// timeout, TLS, proxy, connection overrides), so that a setting never vanishes between the
    /// configuration and the wire.
    ///
    /// ``NetworkClient`` calls it once, when a client is made, whichever way the transport was
    /// made: from a registry (which builds it from the configuration, so it matches) or in code
    /// (which may have been built with other values). The default runs the core's one check
    /// (``TransportSettings/check(running:honoured:skipping:by:)``) with ``runningSettings`` and
    /// ``honouredSettingKeys``: a transport that declares those need not implement this. One that
    /// refuses some values of a key it carries out (with a reason of its own) checks those first,
    /// then runs the same check.
    /// - Parameter configuration: The client's configuration.
    /// - Throws: ``ConfigurationError`` naming the first key the transport does not carry out.
    func checkSettings(of configuration: ClientConfiguration) throws(ConfigurationError)

    /// Stops the transport: fails or cancels what is in flight and releases its resources.
    /// Calls made after shutdown fail. Safe to call more than once.
    func shutdown() async
}

extension Transport {
    /// By default a transport returns bodies as they came: the chain decodes them.
    public var decodesContentCodings: Bool { false }
    /// By default a transport does not expose its connections.
    public var connectionPool: ConnectionPoolSnapshot? { nil }
    /// By default a transport has no stall limit of its own.
    public var stallLimit: Duration? { nil }
    /// By default a transport hands over each response field as the server sent it.
    public var joinsRepeatedResponseFields: Bool { false }

    /// By default a transport reads none of the client configuration's transport settings.
    public var runningSettings: TransportSettings? { nil }
    /// By default a transport carries out none of them.
    public var honouredSettingKeys: Set<String> { [] }

    /// The core's one check of the transport's ``runningSettings`` and ``honouredSettingKeys``
    /// against the configuration's: a key set but not carried out is refused, naming it.
    public func checkSettings(of configuration: ClientConfiguration) throws(ConfigurationError) {
        try configuration.transportSettings.check(
            running: runningSettings ?? TransportSettings(), honoured: honouredSettingKeys, by: name)
    }
}

/// A response head with its streamed body, as transports and middleware pass it along.
public struct TransportResponse: Sendable {
    /// The status and headers.
    public var head: HTTPResponse
    /// The body, read once.
    public var body: ResponseBody
    /// Whether the call was redirected to another origin (scheme, host or port) before this
    /// response: it then answers a request that carried none of the call's credentials, so a 401
    /// here says nothing about them (``AuthRefreshMiddleware`` refreshes on no such 401). Set by
    /// the follow-up link.
    public internal(set) var hasCrossedOrigin = false

    /// Creates a response.
    /// - Parameters:
    ///   - head: The status and headers.
    ///   - body: The body; empty by default.
    public init(head: HTTPResponse, body: ResponseBody = .empty) {
        self.head = head
        self.body = body
    }
}
