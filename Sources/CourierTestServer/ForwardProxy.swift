import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback forward HTTP proxy for the proxy cases: it tunnels `CONNECT host:port` and forwards
/// absolute-form requests (`GET http://host:port/path`), only ever to 127.0.0.1, and records what
/// each request asked of it.
///
/// With ``start(credentials:)`` given a user and password, a request without the matching
/// `Proxy-Authorization: Basic` is answered `407 Proxy Authentication Required` and the connection
/// closed. A target other than `127.0.0.1` or `localhost` is answered `403`: the proxy never sends
/// traffic anywhere else.
///
/// ```swift
/// let proxy = try await ForwardProxy.start()
/// // a client with proxy = proxy.url, calling the loopback server
/// #expect(proxy.requests.map(\.method) == ["CONNECT"])
/// await proxy.shutdown()
/// ```
public final class ForwardProxy: Sendable {
    /// One request the proxy read.
    public struct Request: Sendable, Equatable {
        /// `CONNECT`, or the forwarded request's method.
        public var method: String
        /// The request target as sent: `host:port` for `CONNECT`, an absolute URL otherwise.
        public var target: String
        /// The `Proxy-Authorization` value, if any.
        public var proxyAuthorization: String?
        /// Whether the proxy carried it (credentials matched, target allowed).
        public var carried: Bool
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public var url: String { "http://127.0.0.1:\(port)" }
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let log: NIOLockedValueBox<[Request]>

    /// Every request read so far, in order.
    public var requests: [Request] { log.withLockedValue { $0 } }

    private init(port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, log: NIOLockedValueBox<[Request]>) {
        self.port = port
        self.channel = channel
        self.group = group
        self.log = log
    }

    /// Starts a proxy on 127.0.0.1 and a free port.
    /// - Parameter credentials: The user and password it requires, or `nil` for none.
    /// - Returns: The running proxy; call ``shutdown()`` when done.
    /// - Throws: When the socket cannot be bound.
    public static func start(credentials: (user: String, password: String)? = nil) async throws -> ForwardProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = NIOLockedValueBox<[Request]>([])
        let expected = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        let (channel, port) = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyHandler(expected: expected, log: log))
                }
            }
            .bindLoopback(shuttingDownOnFailure: group)
        return ForwardProxy(port: port, channel: channel, group: group, log: log)
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// One client connection: reads a request head, then tunnels or forwards it to the loopback
/// server it names, and relays bytes both ways until either side closes.
private final class ProxyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private enum State {
        case head([UInt8])
        case connecting(pending: [ByteBuffer])
        case relaying(any Channel)
        case closed
    }

    /// Heads larger than this are answered `431` and closed.
    private static let maxHeadBytes = 64 * 1024
    private let expected: String?
    private let log: NIOLockedValueBox<[ForwardProxy.Request]>
    private var state = State.head([])

    init(expected: String?, log: NIOLockedValueBox<[ForwardProxy.Request]>) {
        self.expected = expected
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        switch state {
        case .head(var bytes):
            bytes.append(contentsOf: buffer.readableBytesView)
            guard let end = Self.headEnd(bytes) else {
                if bytes.count > Self.maxHeadBytes {
                    record(ForwardProxy.Request(method: "", target: "", proxyAuthorization: nil, carried: false))
                    return answer(context, "431 Request Header Fields Too Large")
                }
                state = .head(bytes)
                return
            }
            state = .connecting(pending: [])
            handle(head: String(decoding: bytes[..<end], as: UTF8.self), rest: Array(bytes[(end + 4)...]), context)
        case .connecting(var pending):
            pending.append(buffer)
            state = .connecting(pending: pending)
        case .relaying(let upstream):
            upstream.writeAndFlush(buffer, promise: nil)
        case .closed:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .relaying(let upstream) = state { upstream.close(promise: nil) }
        state = .closed
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Where the blank line after a head starts, if the bytes hold one.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func handle(head: String, rest: [UInt8], _ context: ChannelHandlerContext) {
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count == 3 else { return answer(context, "400 Bad Request") }
        let (method, target, version) = (String(parts[0]), String(parts[1]), String(parts[2]))
        let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let authorization = fields.first { $0.name == "proxy-authorization" }?.value
        let request = ForwardProxy.Request(method: method, target: target, proxyAuthorization: authorization, carried: false)
        // Every refusal is logged before it is answered, so a client that has the answer finds
        // the request in the log.
        if let expected, authorization != expected {
            record(request)
            return answer(context, "407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"courier\"\r\n")
        }
        // The authority, and for a forwarded request the path.
        var authority = Substring(target)
        var path = ""
        if method != "CONNECT" {
            guard target.lowercased().hasPrefix("http://") else {
                record(request)
                return answer(context, "400 Bad Request")
            }
            authority = target.dropFirst("http://".count)
            if let slash = authority.firstIndex(of: "/") {
                path = String(authority[slash...])
                authority = authority[..<slash]
            }
        }
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
            ["127.0.0.1", "localhost"].contains(authority[..<colon].lowercased())
        else {
            record(request)
            return answer(context, "403 Forbidden")
        }
        // What goes to the server first: nothing for a tunnel; for a forwarded request its head in
        // origin form, without the proxy's headers, closing after the answer.
        var opening: [UInt8] = []
        if method != "CONNECT" {
            var text = "\(method) \(path.isEmpty ? "/" : path) \(version)\r\n"
            for field in lines.dropFirst() {
                let name = field.split(separator: ":", maxSplits: 1).first?.lowercased() ?? ""
                if ["proxy-authorization", "proxy-connection", "connection", "keep-alive"].contains(name) { continue }
                text += field + "\r\n"
            }
            opening = Array((text + "Connection: close\r\n\r\n").utf8)
        }
        opening += rest
        let first = opening
        let client = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let isTunnel = method == "CONNECT"
        // By address: no name lookup on the way to the server.
        guard let address = try? SocketAddress(ipAddress: "127.0.0.1", port: port) else { return answer(context, "400 Bad Request") }
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { upstream in
                upstream.eventLoop.makeCompletedFuture { try upstream.pipeline.syncOperations.addHandler(RelayHandler(to: client)) }
            }
            .connect(to: address)
            .whenComplete { result in
                handler.value.connected(result, request, client: client, opening: first, isTunnel: isTunnel)
            }
    }

    /// Logs a request the proxy read.
    private func record(_ request: ForwardProxy.Request) {
        log.withLockedValue { $0.append(request) }
    }

    private func connected(
        _ result: Result<any Channel, any Error>, _ request: ForwardProxy.Request, client: any Channel, opening: [UInt8], isTunnel: Bool
    ) {
        var request = request
        guard case .connecting(let pending) = state, case .success(let upstream) = result else {
            record(request)
            if case .success(let upstream) = result { upstream.close(promise: nil) }
            state = .closed
            client.writeAndFlush(ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                .whenComplete { _ in client.close(promise: nil) }
            return
        }
        request.carried = true
        record(request)
        state = .relaying(upstream)
        if isTunnel { client.writeAndFlush(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n"), promise: nil) }
        if !opening.isEmpty { upstream.write(ByteBuffer(bytes: opening), promise: nil) }
        for buffer in pending { upstream.write(buffer, promise: nil) }
        upstream.flush()
    }

    private func answer(_ context: ChannelHandlerContext, _ status: String, extra: String = "") {
        state = .closed
        let channel = context.channel
        channel.writeAndFlush(ByteBuffer(string: "HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n"))
            .whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Writes what the server sends to the client, and closes the client when the server closes.
final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let client: any Channel

    init(to client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        client.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
