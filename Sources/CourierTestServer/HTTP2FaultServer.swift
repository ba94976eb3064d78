import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// A loopback HTTP/2 server that refuses, resets and goes away on purpose, for the cases where
/// what a transport may send again depends on HTTP/2's own signals (RFC 9113 §8.7): a stream
/// refused with `REFUSED_STREAM`, or above the last stream id of a `GOAWAY`, was never processed;
/// a stream reset with another code may have been.
///
/// It speaks cleartext HTTP/2 with prior knowledge, or TLS with ALPN `h2` (the certificates in
/// ``TestCertificates``), and advertises at most ``maxConcurrentStreams`` streams per connection,
/// so a test can see what a transport does when a connection is full. Routes:
///
/// | route | answer |
/// | --- | --- |
/// | `/script/{name}` | the next ``Step`` of the script `name` (``script(_:_:)``), then `200 scripted` |
/// | `/hold/{name}` | `200 held` once ``release(_:)`` opens the gate `name` |
/// | anything else | `200 ok` |
///
/// ```swift
/// let server = try await HTTP2FaultServer.start()
/// server.script("x", [.refuse])   // the first GET /script/x is refused, the next answered
/// ```
public final class HTTP2FaultServer: Sendable {
    /// What one request to a scripted path gets.
    public enum Step: Sendable, Hashable {
        /// `RST_STREAM` with `REFUSED_STREAM` as soon as the request's headers arrive: the server
        /// processed nothing, so any client may send the request again.
        case refuse
        /// A `GOAWAY` (`NO_ERROR`) whose last stream id is the one before this request's, as soon as
        /// its headers arrive: this stream, and any later one on the connection, was never processed.
        /// Streams below it go on; the connection takes no new ones.
        case goAway
        /// `RST_STREAM` with `INTERNAL_ERROR` once the whole request has arrived: the server may have
        /// acted on it, so only an idempotent request may be sent again.
        case reset
        /// An answer with this status and the body `scripted`.
        case status(Int)
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// Whether it speaks TLS.
    public let usesTLS: Bool
    /// The streams a connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`).
    public let maxConcurrentStreams: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let state: HTTP2FaultState
    private let gates: HoldGates

    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` over TLS (the certificate's name).
    public var baseURL: String { usesTLS ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    private init(
        port: Int, usesTLS: Bool, maxConcurrentStreams: Int, channel: any Channel, group: MultiThreadedEventLoopGroup,
        state: HTTP2FaultState, gates: HoldGates
    ) {
        self.port = port
        self.usesTLS = usesTLS
        self.maxConcurrentStreams = maxConcurrentStreams
        self.channel = channel
        self.group = group
        self.state = state
        self.gates = gates
    }

    /// Starts a server on 127.0.0.1 and a free port.
    /// - Parameters:
    ///   - tls: TLS with ALPN `h2` instead of cleartext prior knowledge.
    ///   - maxConcurrentStreams: The streams a connection may have open at once (1 to 1,000; 100 by
    ///     default, as most servers advertise).
    /// - Returns: The running server; call ``shutdown()`` when done.
    /// - Throws: When the socket cannot be bound or the TLS fixtures cannot be loaded.
    public static func start(tls: Bool = false, maxConcurrentStreams: Int = 100) async throws -> HTTP2FaultServer {
        let streams = min(max(1, maxConcurrentStreams), 1000)
        let context = tls ? try TestServer.makeTLSContext(requireClientCertificate: false, protocols: ["h2"]) : nil
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = HTTP2FaultState()
        let gates = HoldGates()
        let (channel, port) = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                state.connectionOpened()
                return channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    }
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings =
                        nioDefaultSettings.filter { $0.parameter != .maxConcurrentStreams }
                        + [HTTP2Setting(parameter: .maxConcurrentStreams, value: streams)]
                    let connectionStreams = ConnectionStreams()
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(
                                HTTP2FaultStreamHandler(state: state, gates: gates, connection: connectionStreams))
                        }
                    }
                }
            }
            .bindLoopback(shuttingDownOnFailure: group)
        return HTTP2FaultServer(
            port: port, usesTLS: tls, maxConcurrentStreams: streams, channel: channel, group: group, state: state, gates: gates)
    }

    /// Scripts the answers to `/script/<name>`: `steps` in order, one per request, then `200
    /// scripted`. Scripting a name again starts over.
    /// - Parameters:
    ///   - name: The path segment after `/script/`.
    ///   - steps: The answers, first to last.
    public func script(_ name: String, _ steps: [Step]) {
        state.scripts.set(name, steps)
    }

    /// How many requests reached `/script/<name>` since it was scripted, refused ones included.
    public func scriptedRequests(_ name: String) -> Int {
        state.scripts.requests(name)
    }

    /// Connections accepted since start.
    public var connectionsOpened: Int { state.locked.withLockedValue { $0.connectionsOpened } }

    /// The most requests one connection had in flight at once since start (a request is in flight
    /// from its headers to its answer or reset).
    public var maxStreamsPerConnection: Int { state.locked.withLockedValue { $0.maxStreamsPerConnection } }

    /// The requests in flight now, over every connection.
    public var streamsOpen: Int { state.locked.withLockedValue { $0.streamsOpen } }

    /// Opens the gate `name`: every request waiting at `/hold/{name}` is answered now, and later
    /// ones at once.
    /// - Parameter name: The gate's name, the last segment of the path.
    public func release(_ name: String) { gates.open(name) }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// The counts and scripts of one ``HTTP2FaultServer``, shared by its connections.
final class HTTP2FaultState: Sendable {
    struct Counts {
        var connectionsOpened = 0
        var streamsOpen = 0
        var maxStreamsPerConnection = 0
    }

    let scripts = ScriptBook<HTTP2FaultServer.Step>()
    let locked = NIOLockedValueBox(Counts())

    func connectionOpened() { locked.withLockedValue { $0.connectionsOpened += 1 } }

    /// A stream opened on a connection that now has `open` streams.
    func streamOpened(connectionHas open: Int) {
        locked.withLockedValue { counts in
            counts.streamsOpen += 1
            counts.maxStreamsPerConnection = max(counts.maxStreamsPerConnection, open)
        }
    }

    func streamClosed() { locked.withLockedValue { $0.streamsOpen -= 1 } }
}

/// The streams open on one connection; touched only on its event loop.
final class ConnectionStreams: @unchecked Sendable {
    var open = 0
}

/// One stream: reads the request, then plays its step or route.
private final class HTTP2FaultStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let state: HTTP2FaultState
    private let gates: HoldGates
    private let connection: ConnectionStreams
    /// What to do once the request has ended; `nil` until the headers arrive, or after a refusal.
    private var answer: Answer?
    private var answered = false

    private enum Answer {
        case status(Int, String)
        case hold(String)
        case reset
    }

    init(state: HTTP2FaultState, gates: HoldGates, connection: ConnectionStreams) {
        self.state = state
        self.gates = gates
        self.connection = connection
    }

    /// Whether this stream is counted as open: from its request's headers to its answer (or reset).
    private var counted = false

    func channelInactive(context: ChannelHandlerContext) {
        uncount()
        context.fireChannelInactive()
    }

    private func count() {
        guard !counted else { return }
        counted = true
        connection.open += 1
        state.streamOpened(connectionHas: connection.open)
    }

    private func uncount() {
        guard counted else { return }
        counted = false
        connection.open -= 1
        state.streamClosed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if answer == nil, !answered {
                count()
                begin(headers.headers.first(name: ":path") ?? "/", context: context)
            }
            if headers.endStream { requestEnded(context: context) }
        case .data(let data):
            if data.endStream { requestEnded(context: context) }
        default:
            break
        }
    }

    /// The headers arrived: a refusal or a `GOAWAY` happens now; anything else once the request ends.
    private func begin(_ path: String, context: ChannelHandlerContext) {
        let segments = path.split(separator: "?", maxSplits: 1)[0].split(separator: "/").map(String.init)
        switch (segments.first, segments.count) {
        case ("script", 2):
            switch state.scripts.nextStep(segments[1]) {
            case .refuse:
                answered = true
                uncount()
                context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            case .goAway:
                answered = true
                goAway(context: context)
            case .reset: answer = .reset
            case .status(let code): answer = .status(code, "scripted")
            case nil: answer = .status(200, "scripted")
            }
        case ("hold", 2): answer = .hold(segments[1])
        default: answer = .status(200, "ok")
        }
    }

    /// Sends a `GOAWAY` naming the stream before this one as the last processed, on the connection.
    private func goAway(context: ChannelHandlerContext) {
        guard let parent = context.channel.parent, let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        else {
            context.close(promise: nil)
            return
        }
        let last = HTTP2StreamID(max(0, Int(id) - 2))
        parent.writeAndFlush(
            HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil)), promise: nil)
    }

    private func requestEnded(context: ChannelHandlerContext) {
        guard !answered, let answer else { return }
        answered = true
        switch answer {
        case .reset:
            uncount()
            context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
        case .status(let code, let body):
            respond(code, body, context: context)
        case .hold(let name):
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            gates.wait(at: name) {
                loop.execute {
                    let (handler, context) = bound.value
                    handler.respond(200, "held", context: context)
                }
            }
        }
    }

    private func respond(_ status: Int, _ text: String, context: ChannelHandlerContext) {
        uncount()
        let headers = HPACKHeaders([(":status", "\(status)"), ("content-type", "text/plain"), ("content-length", "\(text.utf8.count)")])
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        let body = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }
}
