import CCurl
import Courier
import Foundation
import Synchronization

/// Courier's fast transport: libcurl's multi interface on one dedicated thread.
///
/// Use it for throughput and for HTTP/2: connections are reused, HTTP/2 multiplexes many calls
/// on one connection (over TLS with ALPN, or cleartext with prior knowledge where the linked
/// libcurl supports it), and a call costs little more than libcurl itself. Use
/// `URLSessionTransport` when you cannot install libcurl's development package.
///
/// ```swift
/// var settings = CurlTransport.Configuration()
/// settings.httpVersion = .http2
/// let transport = try CurlTransport(configuration: settings)
/// let client = try NetworkClient(configuration: .init(baseURL: "https://api.example.com"), transport: transport)
/// // ...
/// await client.shutdown()   // also shuts the transport down
/// ```
///
/// What it guarantees:
/// - Task cancellation stops the transfer at once in every phase; the connection is closed (or
///   the HTTP/2 stream reset).
/// - Response bodies stream with backpressure: when the reader falls behind by
///   ``Configuration/responseBufferBytes``, the transfer pauses until it catches up. A body the
///   caller takes only whole (a client's buffered call) is gathered into one buffer instead and
///   handed over at its end, bounded by the response size limit.
/// - Request bodies stream from memory or disk through libcurl's read callback.
/// - Connect timeout and deadline come from the client; a stall limit from ``Configuration``.
/// - Redirects follow Courier's policy (limit; credentials never sent to another origin), not libcurl's.
/// - Every libcurl failure becomes a `NetworkError` of a precise kind, keeping libcurl's message
///   and code (`nativeCode.domain == "CURLcode"`).
///
/// Metrics carry libcurl's phase timings (`requestSent` is when sending began: libcurl's
/// "pretransfer"), bytes, the negotiated version, connection reuse and the peer address.
public final class CurlTransport: Transport {
    /// The registered name, `curl` by default.
    public var name: String { configuration.name }

    /// The connections libcurl has open now, per remote address, counted exactly from its socket
    /// callbacks, and how many transfers reused one.
    public var connectionPool: ConnectionPoolSnapshot? { engine.connections.snapshot }
    /// The settings this transport was made with.
    public let configuration: Configuration
    /// The configuration's ``Configuration/stallTimeout``: long transfers' bodies are bounded by it.
    public var stallLimit: Duration? { configuration.stallTimeout }

    private let engine: CurlEngine

    /// The linked libcurl's version, for example `7.88.1`.
    public static var libcurlVersion: String { CurlRuntime.version }
    /// Whether cleartext HTTP/2 with prior knowledge is supported by the linked libcurl (8.0 or
    /// later); before that, such calls fail with `NetworkError/Kind/unsupported`.
    public static var supportsCleartextHTTP2: Bool { CurlRuntime.supportsCleartextHTTP2 }

    /// Whether the linked libcurl (8.14 or later) tells a TLS connection cut without `close_notify`
    /// from a clean close. Before 8.14 it cannot, and a response over HTTPS whose body ends only
    /// where the connection closes (HTTP/1.x, no `Content-Length`, not chunked) fails as
    /// `NetworkError/Kind/connectionClosed` however the server closed: its end cannot be proven.
    public static var detectsUncleanTLSClose: Bool { CurlRuntime.detectsUncleanTLSClose }

    /// Creates a transport and starts its thread.
    /// - Parameter configuration: Limits, HTTP version, TLS options.
    /// - Throws: `ConfigurationError` for a value out of range, or when libcurl cannot be initialised.
    public init(configuration: Configuration = Configuration()) throws(ConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        do {
            engine = try CurlEngine(configuration: configuration)
        } catch {
            throw ConfigurationError(
                key: ConfigurationKey.transport.name, value: "curl", allowed: "a working libcurl (\(error))", source: "code")
        }
    }

    deinit {
        engine.beginShutdown()
    }

    /// Sends the request through libcurl; see `Transport/send(_:body:context:)`.
    public func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        let version = context.httpVersion ?? configuration.httpVersion
        try CurlRuntime.check(version, scheme: request.scheme)
        if context.isCancelled { throw CancellationError() }
        let transfer = CurlTransfer(request: request, body: body, context: context, version: version, engine: engine)
        let engine = engine
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                engine.submit(transfer, waiter: continuation)
                // The call's deadline stops the transfer in any phase, the body's included (a
                // finished transfer ignores it). The handler holds the transfer, which holds the
                // context, which holds the handler: the client drops the handler when the call
                // ends, which ends that cycle. (A weak reference would give every transfer a side
                // table, and make each retain and release of it take the slow path.) It captures
                // the transfer alone, which is then its context: no allocation.
                context.onDeadline { [transfer] in
                    transfer.engine.stop(transfer, because: .deadlinePassed(phase: transfer.context.recorder.phase))
                }
            }
        } onCancel: {
            engine.stop(transfer, because: .cancelled(phase: context.recorder.phase))
        }
    }

    /// The transport's thread as a task executor, for callers that want to save the thread hop on
    /// each call.
    ///
    /// By default a call's task runs on Swift's global executor and hands each request to the
    /// transport's thread, which hands the response back: two thread hops per call. A task that
    /// prefers this executor runs on the transport's thread itself, between rounds of libcurl
    /// work, so a call and the next one need no lock, no wakeup and no other thread:
    ///
    /// ```swift
    /// await withTaskExecutorPreference(transport.executor) {
    ///     for id in ids { _ = try? await client.response(for: GetUser(id: id)) }
    /// }
    /// ```
    ///
    /// Every transfer of the transport waits while such a task runs, so keep what runs there short
    /// and never block it (no synchronous I/O, no waiting on a semaphore): it suits loops of calls
    /// with light work in between. Once the transport has shut down, tasks that prefer it go on on
    /// the global executor.
    public var executor: any TaskExecutor { engine }

    /// Whether the caller runs on the transport's thread (for tests of ``executor``).
    var isOnTransportThread: Bool { engine.isEngineThread }

    /// Counters of the engine (transfers started, backpressure pauses and resumes).
    var statistics: CurlEngine.Statistics { engine.statistics }

    /// Transfers not yet released (for tests: 0 once every call has ended).
    package var liveTransfers: Int { engine.liveTransfers.load(ordering: .relaxed) }

    /// Stops every transfer in flight (they fail as cancelled), refuses new ones, and returns once
    /// libcurl's handles are released. Safe to call more than once.
    public func shutdown() async {
        await engine.shutdown()
    }
}

extension CurlTransport {
    /// What this transport runs with, in the core's terms: libcurl carries out every transport
    /// setting, so the core's check (`Transport/checkSettings(of:)`) compares them all, and a
    /// difference means the transport was made in code with other values.
    public var runningSettings: TransportSettings? {
        var settings = TransportSettings()
        settings.httpVersion = configuration.httpVersion
        settings.maxConnections = configuration.maxConnections
        settings.maxConnectionsPerHost = configuration.maxConnectionsPerHost
        settings.stallTimeout = configuration.stallTimeout
        settings.tls.caFile = configuration.tls.caFile
        settings.tls.caPEM = configuration.tls.caPEM
        settings.tls.clientCertificateFile = configuration.tls.clientCertificateFile
        settings.tls.clientKeyFile = configuration.tls.clientKeyFile
        settings.tls.pinnedPublicKey = configuration.tls.pinnedPublicKey
        settings.proxy = configuration.proxy
        settings.connectionOverrides = configuration.connectionOverrides
        return settings
    }

    /// Every transport setting: libcurl honours them all.
    public var honouredSettingKeys: Set<String> { Set(TransportSettings.allKeys) }
}

/// Found by the core when this module is linked (see `TransportRegistry.linked`).
package enum LinkedEntry: LinkedTransport {
    package static var entry: TransportRegistry.Entry { .curl() }
}

extension TransportRegistry.Entry {
    /// Registers libcurl under the name `curl`; each client gets its own transport (one thread and
    /// one connection pool).
    /// - Parameter configuration: The transport's settings.
    /// - Returns: The entry.
    public static func curl(_ configuration: CurlTransport.Configuration = .init()) -> TransportRegistry.Entry {
        TransportRegistry.Entry(name: "curl") { client in try CurlTransport(configuration: configuration.applying(client)) }
    }
}
