import CourierTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// An in-process HTTP server on 127.0.0.1 for tests, examples and benchmarks.
///
/// It speaks HTTP/1.1, cleartext HTTP/2 with prior knowledge (``Mode/h2c``), or TLS with ALPN
/// choosing HTTP/2 or HTTP/1.1 (``Mode/tls``, with the certificates in ``TestCertificates``).
/// It binds port 0 (the kernel picks a free port) on the loopback address only, and serves:
///
/// | route | answer |
/// | --- | --- |
/// | `/echo`, `/echo/...` | ``EchoResponse`` as JSON: method, path, query, headers, body |
/// | `/status/{code}` | that status; `?body=` text and `?contentType=` optional |
/// | `/delay/{ms}` | 200 after `ms` milliseconds |
/// | `/hold/{name}` | 200 once ``TestServer/release(_:)`` opens the gate `name` (503 after 60 s) |
/// | `/bytes/{n}` | `n` bytes with a `Content-Length` |
/// | `/stream/{chunks}?size=&delayMs=&gate=` | a chunked body, one chunk every `delayMs`; with `gate`, the first chunk at once and the rest once the gate opens (a response surely mid-body) |
/// | `/shaped/{bytes}?lines=&splitMs=` | `bytes` bytes after `lines` extra header lines, head and body in one write, or with `splitMs` the body that many ms after the head (`courier-bench count --server`) |
/// | `/redirect/{n}` | a 302 chain of `n` hops ending at `/echo` |
/// | `/redirect-to?url=&status=&cc=` | one redirect to `url` (302 by default), with `Cache-Control: cc` when given |
/// | `/headers?Name=value` | 200 with the given response headers |
/// | `/cacheable/{name}?cc=…&lastModified=…&vary=…` | an entity for cache tests: ETag from `X-Version`, `304` to a matching `If-None-Match`, `X-Status` to fail |
/// | `/expect?method=M&header=N:v&bodyLength=L&bodyPrefix=p` | 200 when the request matches each item, 422 naming the first difference |
/// | `/pattern/{n}`, `POST /digest` | `n` bytes of ``PatternBody``; the length and CRC-32 of the request body |
/// | `/tail/{every}?ms=&key=` | 200 `tail`; every `every`-th request (across the process, or per `key` starting with its first) after `ms` ms (50 by default): a slow tail |
/// | `/inventory/...` | the OpenAPI example's document (``InventoryService``) |
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { await server.shutdown() } }
/// print(server.baseURL)   // http://127.0.0.1:PORT
/// ```
public final class TestServer: Sendable {
    /// The protocol the server speaks.
    public enum Mode: String, Sendable, CaseIterable {
        /// HTTP/1.1 over cleartext TCP.
        case http1
        /// HTTP/2 over cleartext TCP, prior knowledge only (no upgrade).
        case h2c
        /// TLS with ALPN: HTTP/2 when the client offers `h2`, HTTP/1.1 otherwise.
        case tls
        /// ``tls`` that also requires a client certificate signed by
        /// ``TestCertificates/clientCAPEM``: a handshake without one fails.
        case mutualTLS
        /// ``tls`` that speaks TLS 1.0 and 1.1 only: every transport must refuse the handshake.
        case legacyTLS

        /// Whether the server speaks TLS.
        public var usesTLS: Bool { self == .tls || self == .mutualTLS || self == .legacyTLS }
    }

    /// The port the server listens on.
    public let port: Int
    /// The protocol the server speaks.
    public let mode: Mode
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let statistics: ServerStatistics
    private let gates: HoldGates
    private let isRunning = NIOLockedValueBox(true)

    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` over TLS (the name the certificate
    /// carries).
    public var baseURL: String { mode.usesTLS ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    /// Connections accepted since start.
    public var connectionsOpened: Int { statistics.snapshot.connectionsOpened }
    /// Connections open now.
    public var connectionsOpen: Int { statistics.snapshot.connectionsOpen }
    /// Requests received since start.
    public var requestCount: Int { statistics.snapshot.requests }
    /// Requests being answered now (received, response not finished, connection open).
    public var requestsInFlight: Int { statistics.snapshot.requestsInFlight }
    /// The most requests in flight at once since start or ``resetCounts()``.
    public var maxRequestsInFlight: Int { statistics.snapshot.maxRequestsInFlight }
    /// The targets (path and query) of the requests received since start or ``resetCounts()``,
    /// oldest first (at most 100,000).
    public var requestLog: [String] { statistics.snapshot.requestLog }
    /// Clears ``requestLog`` and starts ``maxRequestsInFlight`` again from the requests in flight now.
    public func resetCounts() { statistics.resetCounts() }

    /// Opens the gate `name`: every request waiting at `/hold/{name}` is answered `200` now, and
    /// later ones at once. A test that needs calls in flight holds them there instead of racing
    /// a delay.
    /// - Parameter name: The gate's name, the last segment of the path.
    public func release(_ name: String) { gates.open(name) }

    private init(
        port: Int, mode: Mode, channel: any Channel, group: MultiThreadedEventLoopGroup, statistics: ServerStatistics, gates: HoldGates
    ) {
        self.port = port
        self.mode = mode
        self.channel = channel
        self.group = group
        self.statistics = statistics
        self.gates = gates
    }

    /// Starts a server on 127.0.0.1 and a free port.
    /// - Parameters:
    ///   - mode: The protocol; HTTP/1.1 by default.
    ///   - threads: Event-loop threads; one by default.
    /// - Returns: The running server.
    /// - Throws: When the socket cannot be bound or the TLS fixtures cannot be loaded.
    public static func start(mode: Mode = .http1, threads: Int = 1) async throws -> TestServer {
        // Before the group exists, so that a fixture that fails to load leaves nothing running.
        let tls =
            mode.usesTLS ? try makeTLSContext(requireClientCertificate: mode == .mutualTLS, legacyOnly: mode == .legacyTLS) : nil
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let statistics = ServerStatistics()
        let gates = HoldGates()
        let (channel, port) = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                statistics.connectionOpened()
                channel.closeFuture.whenComplete { _ in statistics.connectionClosed() }
                return channel.eventLoop.makeCompletedFuture {
                    switch mode {
                    case .http1: try configureHTTP1(channel, statistics: statistics, gates: gates)
                    case .h2c: try configureHTTP2(channel, statistics: statistics, gates: gates)
                    case .tls, .mutualTLS, .legacyTLS:
                        guard let tls else { throw TestServerError.noTLSContext }
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                        try channel.pipeline.syncOperations.addHandler(
                            ApplicationProtocolNegotiationHandler { result, channel in
                                channel.eventLoop.makeCompletedFuture {
                                    if case .negotiated("h2") = result {
                                        try configureHTTP2(channel, statistics: statistics, gates: gates)
                                    } else {
                                        try configureHTTP1(channel, statistics: statistics, gates: gates)
                                    }
                                }
                            })
                    }
                }
            }
            .bindLoopback(shuttingDownOnFailure: group)
        return TestServer(port: port, mode: mode, channel: channel, group: group, statistics: statistics, gates: gates)
    }

    private static func configureHTTP1(_ channel: any Channel, statistics: ServerStatistics, gates: HoldGates) throws {
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(RouteHandler(statistics: statistics, gates: gates))
    }

    /// HTTP/2: each stream gets its own HTTP/1-style route handler through NIO's codec.
    private static func configureHTTP2(_ channel: any Channel, statistics: ServerStatistics, gates: HoldGates) throws {
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(RouteHandler(statistics: statistics, gates: gates))
            }
        }
    }

    /// The server's TLS context, offering `protocols` in ALPN.
    static func makeTLSContext(
        requireClientCertificate: Bool, legacyOnly: Bool = false, protocols: [String] = ["h2", "http/1.1"]
    ) throws -> NIOSSLContext {
        let certificate = try NIOSSLCertificate(bytes: Array(TestCertificates.serverCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(TestCertificates.serverKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        configuration.applicationProtocols = protocols
        if legacyOnly {
            configuration.minimumTLSVersion = .tlsv1
            configuration.maximumTLSVersion = .tlsv11
        }
        if requireClientCertificate {
            // A client must present a certificate that chains to the client CA (clients have no
            // host name to check).
            let clientCA = try NIOSSLCertificate(bytes: Array(TestCertificates.clientCAPEM.utf8), format: .pem)
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([clientCA])
        }
        return try NIOSSLContext(configuration: configuration)
    }

    /// Closes the listening socket and every connection, and stops the event loops. Only the first
    /// call does anything: a test may stop the server early and still leave it to `withServer`.
    public func shutdown() async {
        guard
            isRunning.withLockedValue({ running in
                defer { running = false }
                return running
            })
        else { return }
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Why a test server could not start.
public enum TestServerError: Error, Sendable {
    /// The bound socket reported no port.
    case noPort
    /// TLS mode without a TLS context (an internal error).
    case noTLSContext
}
