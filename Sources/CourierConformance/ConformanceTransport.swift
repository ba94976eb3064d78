import Courier
import CourierTestServer
import Testing

/// A transport under test: how to make it, and what it declares it cannot do.
///
/// Adapters outside this package build one of these and run ``ConformanceCases`` with it.
///
/// ```swift
/// let transport = ConformanceTransport(name: "mine", nativeErrorDomain: "MyError", phaseTimings: .reported) { _ in
///     try MyTransport()
/// }
/// @Test(arguments: [transport]) func cases(transport: ConformanceTransport) async throws {
///     try await ConformanceCases.getWithQueryAndHeaders(transport)
/// }
/// ```
public struct ConformanceTransport: Sendable, CustomTestStringConvertible {
    /// Whether a transport reports phase timings in ``RequestMetrics``.
    public enum PhaseTimings: Sendable, Hashable {
        /// Timings are `.available` with at least first byte and total.
        case reported
        /// Timings are `.unavailable` with exactly this reason.
        case unavailable(reason: String)
    }

    /// Whether a transport keeps repeated response header names as separate fields.
    public enum RepeatedResponseHeaders: Sendable, Hashable {
        /// Each field arrives on its own, in order.
        case kept
        /// The values of one name arrive joined with ", " (as `HTTPURLResponse` stores them).
        case joined
    }

    /// Whether cleartext HTTP/2 with prior knowledge works.
    public enum CleartextHTTP2: Sendable, Hashable {
        /// Calls succeed over one multiplexed connection.
        case supported
        /// Calls fail before any I/O with ``NetworkError/Kind/unsupported``.
        case unsupported
    }

    /// Whether the transport can trust a private CA given in ``ClientConfiguration/tls``.
    public enum PrivateCA: Sendable, Hashable {
        /// It trusts the CA and connects.
        case trusted
        /// It refuses the configuration at start-up, naming the key.
        case refused
    }

    /// Whether a response body waits for a slow consumer.
    public enum DownloadBackpressure: Sendable, Hashable {
        /// The transfer pauses while the consumer is behind: memory stays bounded.
        case paused
        /// The body arrives as fast as the network delivers it and waits in memory for the
        /// consumer (URLSession on Linux: FoundationNetworking offers no way to pause a task).
        case none
    }

    /// Whether a streamed request body waits for the connection.
    public enum UploadBackpressure: Sendable, Hashable {
        /// The body is read only as fast as the connection takes it: memory stays bounded by the
        /// transport's buffers.
        case paused
        /// The transport pauses the body only once its event loop has seen the connection full, so
        /// a fast body (a file) runs ahead by the writes the loop has not reached yet: bounded by
        /// the speeds of the two sides, not by a buffer size (AsyncHTTPClient's writes are queued
        /// onto the channel's loop and its pause arrives late: swift-server/async-http-client#784).
        case pausedLate
    }

    /// When the server hears that an HTTP/2 stream its caller gave up on was reset.
    public enum HTTP2StreamReset: Sendable, Hashable {
        /// At once: the transport sends `RST_STREAM` when the transfer stops.
        case immediate
        /// With the connection's next frame: the transfer stops at once, but the library queues
        /// its `RST_STREAM` and flushes it only when the connection is used again (libcurl 7.88
        /// and 8.14 after `curl_multi_remove_handle`). Until then the server holds the stream,
        /// bounded by its flow-control window.
        case withNextFrame
    }

    /// What becomes of a request on an HTTP/2 stream the server did not process (RFC 9113 §8.7).
    public enum UnprocessedStream: Sendable, Hashable {
        /// The transport reports it (``NetworkError/requestNotProcessed``) and Courier sends it
        /// once more whatever its method, counted in ``RequestMetrics/unsentRetries``.
        case resentByCourier
        /// The transport's own library sends it once more, counted in
        /// ``RequestMetrics/transportResends``, but only a request that may be repeated: the
        /// library cannot tell this from a reused connection that died after the request left
        /// (libcurl), so any other request fails as ``NetworkError/Kind/connectionClosed``.
        case resentByLibraryWhenRepeatable
        /// It fails as ``NetworkError/Kind/connectionClosed``, not told apart from a server's own
        /// reset (AsyncHTTPClient: NIOHTTP2 reports a stream dropped by a `GOAWAY` as `CANCEL`), so
        /// only a retry policy sends it again, and only when it may be repeated.
        case failed
    }

    /// What becomes of a request on a reused HTTP/1.1 connection that closes after the request
    /// left but before any answer (the server may have acted on it).
    public enum DeadReusedConnection: Sendable, Hashable {
        /// A request that may not be repeated (no idempotent method, no `Idempotency-Key`) fails as
        /// ``NetworkError/Kind/connectionClosed``; others may be sent again.
        case unsafeRequestsFail
        /// The transport's own library sends any request again on a new connection, whatever its
        /// method, and Courier cannot stop it (URLSession on Linux with libcurl 7: FoundationNetworking's
        /// libcurl).
        case everyRequestResent
        /// The library tries to send it again but fails to rewind the body, so it is not sent
        /// twice; the failure reaches Courier unclassified (``NetworkError/Kind/transportFailure``:
        /// URLSession on Linux with libcurl 8).
        case unsafeRequestsFailUnclassified
    }

    /// When a transport notices that the server closed a kept-alive HTTP/1.1 connection while it
    /// sat idle.
    public enum StaleConnectionCheck: Sendable, Hashable {
        /// Before it reuses the connection (libcurl polls it): the request goes on a new one.
        case beforeReuse
        /// Only when it writes on it (AsyncHTTPClient): a request whose first write finds the
        /// connection closed is sent again by Courier (``NetworkError/requestNotProcessed``); one
        /// written into the closing connection fails as ``NetworkError/Kind/connectionClosed``,
        /// since the client cannot know the server did not read it.
        case onWrite
    }

    /// What a transport does when a call finds every HTTP/2 connection to its host at the
    /// server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    public enum FullHTTP2Connection: Sendable, Hashable {
        /// It opens another connection.
        case opensAnother
        /// It waits for a stream on the connection it has.
        case waits
    }

    /// How a transport bounds connecting.
    public enum ConnectTimeout: Sendable, Hashable {
        /// ``ClientConfiguration/connectTimeout`` applies, and the error's phase is `connect`.
        case separate
        /// Only the stall limit (an idle timeout) bounds connecting, and the error cannot say
        /// whether connecting or waiting timed out (phase `awaitingResponse`): URLSession on Linux.
        case boundedByStallLimit
    }

    /// What the transport does with `1xx` interim responses before the final one.
    public enum InterimResponses: Sendable, Hashable {
        /// Every interim response is skipped, and counted against
        /// ``ResponseHeadLimits/maxInterimResponses``.
        case skipped
        /// Every interim response is skipped inside the transport's own library, unseen, so the
        /// interim limit cannot apply (AsyncHTTPClient).
        case skippedUnseen
        /// A `1xx` response fails the call as ``NetworkError/Kind/unsupported`` at once (URLSession
        /// on Linux takes it for the final response and would then hang until the deadline).
        case refused
    }

    /// How a transport sends calls through a forward proxy (``ClientConfiguration/proxy``).
    public enum Proxying: Sendable, Hashable {
        /// Plain http is forwarded (`GET http://host/path` to the proxy), https tunnelled with
        /// `CONNECT` (curl).
        case forwardsPlainHTTP
        /// Every call is tunnelled with `CONNECT`, plain http too (AsyncHTTPClient).
        case tunnelsEverything
        /// Only the proxies the process environment names, which the platform library follows on
        /// its own; any other proxy setting is refused at start-up (URLSession on Linux).
        case environmentOnly
    }

    /// Which connection overrides (``ClientConfiguration/connectionOverrides``) a transport honours.
    public enum ConnectionOverriding: Sendable, Hashable {
        /// A Unix socket, for http and https, and address overrides (curl).
        case all
        /// Both, for plain http only: an https call with either fails as
        /// ``NetworkError/Kind/unsupported`` (AsyncHTTPClient: no name to verify over a socket, and
        /// at an overridden address SwiftNIO SSL takes a certificate for the address whatever the name).
        case plainHTTPOnly
        /// Neither: both are refused at start-up, naming the key (URLSession on Linux).
        case refused
    }

    /// How repeated response header names arrive.
    public var repeatedResponseHeaders: RepeatedResponseHeaders = .kept
    /// Which connection overrides it honours.
    public var connectionOverriding: ConnectionOverriding = .all
    /// How it sends calls through a proxy.
    public var proxying: Proxying = .forwardsPlainHTTP
    /// Whether cleartext HTTP/2 with prior knowledge works.
    public var cleartextHTTP2: CleartextHTTP2 = .unsupported
    /// What it does with `1xx` interim responses.
    public var interimResponses: InterimResponses = .skipped
    /// Whether it can trust a private CA.
    public var privateCA: PrivateCA = .trusted
    /// Whether a compressed body with no `Content-Length` is held to ``Decompression/maxRatio``
    /// (`false`: only to the body cap, on a transport whose library decodes and counts no bytes
    /// before decoding: URLSession).
    public var checksRatioWithoutLength = true
    /// Whether the transport sees a TLS `close_notify`, so a body that ends where the connection
    /// closes is whole after a clean close (`false`: every such body over HTTPS fails, since its
    /// end cannot be proven; curl on libcurl 7).
    public var provesCleanTLSClose = true
    /// Whether the transport itself may request again an HTTP/2 response cut before its head
    /// reached the caller (curl on libcurl 7, which resends such idempotent requests to hide that
    /// libcurl's spurious HTTP/2 failures): a download then gets the whole body from the second
    /// request, with no cut to resume or restart. It happens only when the head and the cut
    /// arrive in one round of the transport's work, so a case that cuts a body accepts both.
    public var resendsHTTP2CutBeforeHead = false
    /// Whether a response body waits for a slow consumer.
    public var downloadBackpressure: DownloadBackpressure = .paused
    /// Whether a request body waits for the connection.
    public var uploadBackpressure: UploadBackpressure = .paused
    /// When the server hears of an HTTP/2 stream cancelled mid-body.
    public var http2StreamReset: HTTP2StreamReset = .immediate
    /// What becomes of a request on a stream refused with `REFUSED_STREAM`.
    public var refusedStream: UnprocessedStream = .resentByCourier
    /// What becomes of a request on a stream above a `GOAWAY`'s last stream id.
    public var goAwayStream: UnprocessedStream = .resentByCourier
    /// When the transport notices an idle connection the server closed.
    public var staleConnectionCheck: StaleConnectionCheck = .beforeReuse
    /// What becomes of a request a reused connection swallowed before any answer.
    public var deadReusedConnection: DeadReusedConnection = .unsafeRequestsFail
    /// What a call does when every HTTP/2 connection to its host is full.
    public var fullHTTP2Connection: FullHTTP2Connection = .opensAnother
    /// How the transport bounds a connection that never opens.
    public var connectTimeout: ConnectTimeout = .separate
    /// Whether the transport's library always decodes compressed bodies, so a call that sets its
    /// own `Accept-Encoding` still gets them decoded (URLSession).
    public var alwaysDecodes = false
    /// Whether a compressed body cut short fails the call. `false` where the transport's library
    /// decodes and ends such a body quietly, so the call succeeds with the part that arrived
    /// (URLSession: FoundationNetworking's libcurl).
    public var detectsTruncatedCoding = true
    /// Faults that crash the whole process inside the transport's own platform library (URLSession's
    /// FoundationNetworking), which Courier cannot catch. The in-process fault cases leave them
    /// out for this transport; a test that runs each in a child process pins that the toolchain
    /// still crashes, so the declaration goes the day a toolchain fixes it.
    public var crashesInToolchain: Set<FaultServer.Fault> = []
    /// Faults the transport's platform library takes seconds of CPU over on a queue it shares with
    /// every call in the process (URLSession: FoundationNetworking parses 10,000 header lines in
    /// quadratic time on its one work queue). They fail as they should, but in the test process
    /// they hold the transport's other cases past their deadlines, so they run in a child process.
    public var holdsToolchainQueue: Set<FaultServer.Fault> = []

    /// The faults the in-process fault cases run for this transport: all but those that crash
    /// the toolchain (see ``crashesInToolchain``) or hold its shared queue (``holdsToolchainQueue``).
    public var survivableFaults: [FaultServer.Fault] {
        FaultServer.Fault.allCases.filter { !crashesInToolchain.contains($0) && !holdsToolchainQueue.contains($0) }
    }

    /// The transport's registered name (`urlsession`, `curl`, `ahc`, ...).
    /// The loopback server's protocol for the cases that run over any: HTTP/1.1 by default;
    /// ``over(_:)`` makes the same transport for HTTP/2 over TLS or cleartext HTTP/2.
    public private(set) var serverMode: TestServer.Mode = .http1

    public var name: String
    /// The `NetworkError.NativeCode.domain` its connection failures carry.
    public var nativeErrorDomain: String
    /// What its metrics say about phase timings.
    public var phaseTimings: PhaseTimings
    /// Makes a fresh transport for one client.
    public var make: @Sendable (ClientConfiguration) throws -> any Transport

    /// Describes a transport under test.
    /// - Parameters:
    ///   - name: The registered name.
    ///   - nativeErrorDomain: The domain of its native error codes.
    ///   - phaseTimings: Whether it reports phase timings.
    ///   - make: Makes a transport for a client configuration.
    public init(
        name: String, nativeErrorDomain: String, phaseTimings: PhaseTimings,
        make: @escaping @Sendable (ClientConfiguration) throws -> any Transport
    ) {
        self.name = name
        self.nativeErrorDomain = nativeErrorDomain
        self.phaseTimings = phaseTimings
        self.make = make
    }

    /// The name, as test output shows it.
    public var testDescription: String {
        switch serverMode {
        case .http1: name
        case .tls: "\(name) over HTTP/2 with TLS"
        case .mutualTLS: "\(name) over HTTP/2 with mutual TLS"
        case .legacyTLS: "\(name) over TLS 1.1"
        case .h2c: "\(name) over cleartext HTTP/2"
        }
    }

    /// The same transport, for a server speaking another protocol: clients made for that server
    /// trust the test CA (TLS) or use HTTP/2 with prior knowledge (h2c).
    /// - Parameter mode: The server's protocol.
    /// - Returns: The transport with its server mode set.
    public func over(_ mode: TestServer.Mode) -> ConformanceTransport {
        var copy = self
        copy.serverMode = mode
        return copy
    }

    /// A client on a fresh transport of this kind.
    /// - Parameters:
    ///   - baseURL: The base URL.
    ///   - middleware: Application middleware for the client.
    ///   - observers: Told about every finished call.
    ///   - configure: Changes to the client configuration.
    /// - Returns: The client; shut it down when done.
    public func makeClient(
        baseURL: String, middleware: [any Middleware] = [], observers: [any CallObserver] = [],
        configure: (inout ClientConfiguration) -> Void = { _ in }
    ) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: baseURL, transport: name)
        configure(&configuration)
        return try NetworkClient(configuration: configuration, transport: make(configuration), middleware: middleware, observers: observers)
    }

    /// A client on a fresh transport of this kind, aimed at `server`: trusting the test CA for a
    /// TLS server, with HTTP/2 prior knowledge for an h2c one.
    /// - Parameters:
    ///   - server: The loopback server.
    ///   - middleware: Application middleware for the client.
    ///   - observers: Told about every finished call.
    ///   - configure: Changes to the client configuration.
    /// - Returns: The client; shut it down when done.
    public func makeClient(
        _ server: TestServer, middleware: [any Middleware] = [], observers: [any CallObserver] = [],
        configure: (inout ClientConfiguration) -> Void = { _ in }
    ) throws -> NetworkClient {
        try makeClient(baseURL: server.baseURL, middleware: middleware, observers: observers) { configuration in
            Self.reach(server.mode, with: &configuration)
            configure(&configuration)
        }
    }

    /// Sets what a client needs to reach a test server speaking `mode`: the test CA for TLS,
    /// HTTP/2 with prior knowledge for h2c.
    /// - Parameters:
    ///   - mode: The server's protocol.
    ///   - configuration: The client configuration to change.
    public static func reach(_ mode: TestServer.Mode, with configuration: inout ClientConfiguration) {
        switch mode {
        case .http1: break
        case .tls, .mutualTLS, .legacyTLS: configuration.tls.caPEM = TestCertificates.caPEM
        case .h2c: configuration.httpVersion = .http2PriorKnowledge
        }
    }
}
