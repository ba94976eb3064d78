import HTTPTypes
import Logging

/// What travels with one call through the middleware and into the transport, besides the request.
///
/// Middleware may return a changed copy to `next` (for example with a different logger).
public struct RequestContext: Sendable {
    // What is stored: nine fields, each one concept (the call's identity, its deadline, its clock,
    // its limits, its header scope, its logging, its preferences, the values of
    // `RequestContextKey`s, and the one reference to the running call). The public properties
    // below read them.

    /// The call's id, team and endpoint name.
    private var identity: Identity
    /// When the call must be finished (its signal is the running call's, ``deadlineSignal``).
    private var due: Moment
    /// The clock the deadline is on, and that links wait on (retry backoff, the mock's delays):
    /// the configuration's ``ClientConfiguration/timeSource``.
    public var clock: any TimeSource = SystemTimeSource()
    /// The call's limits: connect timeout, body and head sizes, redirects.
    private var limits: CallLimits
    /// Which headers are secret or the call's own, and whether a redirect crossed origins.
    private var headerScope: HeaderScope
    /// A logger the call's endpoint or a middleware set; `nil` (free to copy) reads the client's,
    /// in the internals, with the request id added when it is read.
    private var ownLogging: CallLogging?
    /// The HTTP version and cache use the call asks for.
    private var preferences = Preferences()
    /// Per-call values declared with ``RequestContextKey``; empty (and unallocated) until one is set.
    private var values: [ObjectIdentifier: any Sendable] = [:]
    /// The running call this context belongs to, its one owner (``RunningCall``): its record,
    /// its deadline's signal and the chain's internals are read through it.
    var call: RunningCall

    /// Where the call counts its bytes, when its endpoint or its batch asks for progress.
    package var progressMeter: ProgressMeter? { internals.progress }

    /// This context for a part of the call run beside it (a hedged copy) or after its answer (a
    /// background revalidation): a record of its own, the call's deadline, no progress (see
    /// `RunningCall.attempt()`).
    package func forPartOfCall() -> RequestContext {
        var part = self
        part.call = call.attempt()
        return part
    }

    /// A unique id for the call, for logs and tracing.
    public var requestID: String {
        get { identity.requestID }
        set { identity.requestID = newValue }
    }
    /// The team the API object belongs to, if it named one.
    public var team: String? {
        get { identity.team }
        set { identity.team = newValue }
    }
    /// The call's endpoint name when its ``Endpoint`` gives one (``Endpoint/endpointName``; a
    /// generated OpenAPI client's `operationID` through `CourierOpenAPI`), for middleware, header
    /// rules (``HeaderRule/Value/computed(_:)``) and logs; `nil` otherwise.
    public var endpointName: String? {
        get { identity.endpointName }
        set { identity.endpointName = newValue }
    }
    /// When the call must be finished, on ``clock``. The client ends the call there (cancelling
    /// the work under it); transports hand ``remaining`` to their library only as a backstop.
    public var deadline: ContinuousClock.Instant {
        get { due.instant }
        set { due = Moment(newValue) }
    }
    /// ``deadline`` as stored: a ``Moment`` keeps the context's size fixed (see there).
    var deadlineMoment: Moment {
        get { due }
        set { due = newValue }
    }
    /// The deadline as a cancellation source, passed by the client's alarm on ``clock``: the
    /// running call's (``CallDeadline/never`` outside a client, and for a shared transfer).
    var deadlineSignal: CallDeadline { call.deadline }
    /// Where the transport reports the phase and the metrics of this call: a view of the running
    /// call's record.
    /// Setting it makes the context's transport write another recorder, with the same deadline
    /// and internals.
    public var recorder: TransferRecorder {
        get { TransferRecorder(call) }
        set { call = call.writing(newValue.call) }
    }
    /// What only the chain's own links read, fixed when the call is made (see ``LinkContext``).
    var internals: LinkContext { call.internals }
    /// The longest a transport may spend establishing a connection.
    public var connectTimeout: Duration {
        get { limits.connectTimeout }
        set { limits.connectTimeout = newValue }
    }
    /// The largest response body accepted, in bytes.
    public var maxResponseBytes: Int {
        get { limits.maxResponseBytes }
        set { limits.maxResponseBytes = newValue }
    }
    /// The most a response head may hold. The chain checks every head against it; a transport
    /// that reads heads itself should also stop reading there.
    public var responseHeadLimits: ResponseHeadLimits {
        get { limits.responseHeadLimits }
        set { limits.responseHeadLimits = newValue }
    }
    /// The most redirects the chain's follow-up link follows (transports follow none).
    public var maxRedirects: Int {
        get { limits.maxRedirects }
        set { limits.maxRedirects = newValue }
    }
    /// Further header names (lowercase) that carry secrets, beyond ``CredentialScope/standardNames``:
    /// the configuration's and those of secret header rules. Together they are the call's
    /// credentials (``credentialHeaderNames``). Kept lowercase however they are written.
    public var secretHeaderNames: Set<String> {
        get { headerScope.secretHeaderNames }
        set {
            headerScope.secretHeaderNames = newValue
            headerScope.lowercaseSecretNames()
        }
        // In place (a middleware's `insert` does not copy the set).
        _modify {
            yield &headerScope.secretHeaderNames
            headerScope.lowercaseSecretNames()
        }
    }
    /// The logger for this call, with the request id in its metadata.
    ///
    /// In the client's own contexts the id is added when the logger is read, so a call whose
    /// middleware never logs does not pay for a copy of the logger. A logger set here is kept as
    /// it is given.
    public var logger: Logger {
        get {
            guard let own = ownLogging else { return Self.logger(internals.logger, taggedWith: requestID) }
            return own.addsRequestID ? Self.logger(own.logger, taggedWith: requestID) : own.logger
        }
        set { ownLogging = CallLogging(logger: newValue, addsRequestID: false) }
    }
    /// ``logger`` without the request id the client adds when it is read.
    var untaggedLogger: Logger { ownLogging?.logger ?? internals.logger }
    /// The level of the call's logger, read in place: a copy of a logger whose handler is boxed
    /// (any real backend) costs a retain.
    var logLevel: Logger.Level {
        if let own = ownLogging { return own.logger.logLevel }
        return internals.logger.logLevel
    }
    /// ``logger`` for a library that logs only at `debug` and `trace` (AsyncHTTPClient), or `nil`
    /// when the call's logger would drop those lines: then no tagged copy is made for the call.
    public var debugLogger: Logger? { logLevel <= .debug ? logger : nil }
    /// A logger that drops everything: the default of a context made outside a client.
    public static let silent = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The HTTP version the call asks for, or `nil` to use the transport's configured one.
    public var httpVersion: HTTPVersionPreference? {
        get { preferences.httpVersion }
        set { preferences.httpVersion = newValue }
    }
    /// Whether a redirect of this call has gone to another origin (scheme, host or port) than the
    /// one before it. Set by the follow-up link for every later hop: the hop then carries only the
    /// cross-origin safelist (``FollowUp/crossOriginSafelist``), and network middleware must add no
    /// credential to it (the shipped ones add none). See <doc:WritingMiddleware>.
    public internal(set) var hasCrossedOrigin: Bool {
        get { headerScope.hasCrossedOrigin }
        set { headerScope.hasCrossedOrigin = newValue }
    }
    /// The names of the headers the API object set itself. They win over every header rule and
    /// default (see `TeamHeadersMiddleware`).
    public var ownHeaderNames: Set<HTTPField.Name> {
        get { headerScope.ownHeaderNames }
        set { headerScope.ownHeaderNames = newValue }
    }
    /// How the call uses the response cache.
    public var cachePolicy: CachePolicy {
        get { preferences.cachePolicy }
        set { preferences.cachePolicy = newValue }
    }

    /// Whether the caller reads the body as a stream (``NetworkClient/stream(_:)``): links must
    /// pass it on without reading it whole (the queue's gate then holds its slot until the body
    /// ends, and never shares the transfer).
    public var streamsBody: Bool { internals.bodyReading == .streamed }
    /// The queue the call waits in, when it has one.
    var placement: QueuePlacement? { internals.placement }

    /// Creates a context. The client makes one per call; tests and custom callers may make their own.
    public init(
        requestID: String,
        team: String? = nil,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int = ClientConfiguration.defaultMaxResponseBytes,
        secretHeaderNames: Set<String> = [],
        logger: Logger = RequestContext.silent,
        recorder: TransferRecorder,
        httpVersion: HTTPVersionPreference? = nil
    ) {
        identity = Identity(requestID: requestID, team: team)
        due = Moment(deadline)
        limits = CallLimits(maxResponseBytes: maxResponseBytes)
        headerScope = HeaderScope(secretHeaderNames: Set(secretHeaderNames.map { $0.lowercased() }))
        ownLogging = CallLogging(logger: logger, addsRequestID: false)
        // The recorder's record only: a client's recorder does not bring its call's deadline or internals.
        call = RunningCall.standalone(writing: recorder.call)
        preferences.httpVersion = httpVersion
    }

    /// The context every call of a client starts from (see ``NetworkClient/callTemplate``): the
    /// configuration's limits, credential names, clock, logger and cache policy, and the chain's
    /// internals. A call sets its own id, deadline, running call and what its endpoint names.
    init(template configuration: ClientConfiguration, internals: LinkContext) {
        identity = Identity(requestID: "")
        due = Moment.now()
        limits = CallLimits(
            connectTimeout: configuration.connectTimeout, maxResponseBytes: configuration.maxResponseBytes,
            responseHeadLimits: configuration.responseHeadLimits, maxRedirects: configuration.maxRedirects)
        headerScope = HeaderScope(secretHeaderNames: configuration.secretHeaderNames)
        clock = configuration.timeSource
        // The configuration's logger is the internals' (read unless a call sets its own).
        // Replaced by each call's own (see ``Call``), which takes these internals.
        call = RunningCall.make(transport: "", internals: internals, deadline: .none)
        preferences.cachePolicy = configuration.cachePolicy
    }

    /// Sets the logger a call's endpoint names, keeping the request id added when it is read.
    mutating func useLogger(_ logger: Logger) {
        ownLogging = CallLogging(logger: logger, addsRequestID: true)
    }

    /// `logger` with the call's id in its metadata under `courier.request_id`.
    static func logger(_ logger: Logger, taggedWith requestID: String) -> Logger {
        var tagged = logger
        tagged[metadataKey: "courier.request_id"] = .string(requestID)
        return tagged
    }

    /// Draws one more sending of the request to `host` from the client's retry budget (the one
    /// retries, hedges, auth-refresh repeats and resends of unsent attempts share; see
    /// ``Resilience/retryBudget``). Middleware that repeats a call calls it first. A transport may
    /// too; the curl transport does not for libcurl's own resends, which it counts in
    /// ``RequestMetrics/transportResends`` instead (see <doc:WritingATransport>).
    /// - Parameter host: The request's authority.
    /// - Returns: `true` when the budget allows it (always outside a client); `false` when it is
    ///   spent, and ``RequestMetrics/retryRefusedByBudget`` is then set.
    public func drawRetryBudget(host: String) -> Bool {
        guard let retryLedger = internals.retryLedger else { return true }
        if retryLedger.withdraw(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: clock)) { return true }
        recorder.update { $0.retryRefusedByBudget = true }
        return false
    }

    /// Tells the call how much of the request body the transport has handed to the connection in
    /// this attempt, for its progress (see ``ProgressReporter``). A transport calls it as it
    /// writes the body (from any thread; the figure only grows within an attempt) and once more
    /// with the whole length when the body is done. Cheap, and nothing at all when the call
    /// counts no progress.
    /// - Parameter total: The body bytes written so far in this attempt.
    public func reportBytesSent(_ total: Int64) {
        internals.progress?.sent(total)
    }

    /// Whether the caller is a client's call that takes the body only whole, and nothing watches
    /// it arrive (no progress is counted): a transport may then hand over the head together with
    /// the whole body, up to its buffer's size, instead of streaming it. `false` for a streamed
    /// call and for a context made outside a client.
    public var takesBodyWhole: Bool { internals.bodyReading == .whole && internals.progress == nil }

    /// Whether the call counts its progress: a transport that must do extra work to count the
    /// bytes it sends (split a body it would write at once) does it only then.
    public var countsProgress: Bool { internals.progress != nil }

    /// Time left before the deadline on ``clock`` (zero once it has passed).
    public var remaining: Duration {
        max(.zero, Moment.now(on: clock).duration(to: deadlineMoment))
    }

    /// The time a transport may give its library as a backstop for the whole exchange, body
    /// included: ``remaining``, or for a long transfer (a download, an event stream) the time to
    /// its own end, since its body is bounded by the stall limit once its head is in, not by the
    /// deadline (the client ends it either way; this only keeps a library's own timer from ending
    /// it first). Zero once it has passed.
    public var transferRemaining: Duration {
        guard let end = internals.transferEnd else { return remaining }
        return max(.zero, Moment.now(on: clock).duration(to: end))
    }

    /// Whether the calling task was cancelled or the call's deadline has passed: a wait that is
    /// about to start should not.
    public var isCancelled: Bool { Task.isCancelled || deadlineSignal.hasPassed }

    /// Whether the call's deadline has passed (the client's alarm rang).
    public var deadlineHasPassed: Bool { deadlineSignal.hasPassed }

    /// Runs `operation`; `onCancel` runs when the task is cancelled or the call's deadline passes
    /// while it runs (at once when either already happened), so one handler stops a wait for both.
    ///
    /// Use it where a transport or a link waits, in place of `withTaskCancellationHandler`. As
    /// with that function, `operation` must check ``isCancelled`` where it parks (under the same
    /// lock as `onCancel`), since `onCancel` may run before it. `onCancel` may run twice (task
    /// cancellation and deadline): make it idempotent.
    /// - Parameters:
    ///   - operation: The wait.
    ///   - onCancel: Ends the wait; short, never blocking.
    /// - Returns: What `operation` returns.
    public func withCancellationHandler<T>(
        _ operation: () async throws -> T, onCancel: @escaping @Sendable () -> Void
    ) async rethrows -> T {
        let token = deadlineSignal.register(onCancel)
        defer { deadlineSignal.remove(token) }
        return try await withTaskCancellationHandler(operation: operation, onCancel: onCancel)
    }

    /// Runs `handler` if the call's deadline passes while the call is still running (at once
    /// when it has), for work that lives longer than one wait: a transfer whose body is read
    /// later. Nothing runs once the call has finished.
    /// The context keeps the handler until the call ends, then drops it: the handler may hold the
    /// transfer (which holds the context) strongly, with no weak reference, because that cycle
    /// ends with the call. It must not hold the context itself (take what it needs, such as
    /// ``recorder``, before).
    /// - Parameter handler: Stops the work; short, never blocking, idempotent.
    public func onDeadline(_ handler: @escaping @Sendable () -> Void) {
        deadlineSignal.register(handler)
    }

    /// Runs `operation` in a child task that the call's deadline (and the caller's cancellation)
    /// cancels: for a library that only Task cancellation stops. Costs a child task and two
    /// executor hops; prefer ``withCancellationHandler(_:onCancel:)`` where the wait has a handle.
    /// - Parameter operation: The work.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws (`CancellationError` or the library's own error when the
    ///   deadline cancelled it: the client reports ``NetworkError/Kind/timedOut``).
    public func interruptible<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        let interruptible = InterruptibleTask()
        let signal = deadlineSignal
        async let outcome = interruptible.run(operation, deadline: signal)
        return try await outcome
    }

    /// The value stored for a key, or the key's default.
    ///
    /// A new per-call setting is one declaration: a ``RequestContextKey`` (and, for convenience,
    /// a computed property that reads this subscript). Middleware set it before `next`; later links
    /// and the transport read it.
    public subscript<Key: RequestContextKey>(key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)].flatMap { $0 as? Key.Value } ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// The call's credential header names (lowercase): ``CredentialScope/standardNames`` and
    /// ``secretHeaderNames``. They never reach another origin, key the cache and de-duplication,
    /// and are redacted (see ``CredentialScope``).
    public var credentialHeaderNames: Set<String> {
        CredentialScope.standardNames.union(secretHeaderNames)
    }

    /// Whether the header `name` (lowercase) is one of the call's credentials
    /// (``credentialHeaderNames``), without building the set.
    public func isCredential(_ name: String) -> Bool {
        CredentialScope.isCredential(name, secretNames: secretHeaderNames)
    }
}

/// A typed key for a per-call value carried by ``RequestContext``.
///
/// Declare a key to pass something from middleware to later links or to a transport without a
/// new stored property:
///
/// ```swift
/// enum TenantKey: RequestContextKey {
///     static let defaultValue: String? = nil
/// }
/// context[TenantKey.self] = "acme"
/// ```
public protocol RequestContextKey {
    /// The type of the value.
    associatedtype Value: Sendable
    /// The value read when none was set.
    static var defaultValue: Value { get }
}
