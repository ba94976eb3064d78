import CourierTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback HTTP/1.1 server for long runs: it answers every request with `200` and a small body
/// on a kept-alive connection, except a given share of requests, which get one of the
/// ``Fault``s, drawn from a seeded sequence. It counts what arrives, so a run can check that a
/// `POST` without an `Idempotency-Key` never reached it twice.
///
/// Paths: `/post/<call>` for a `POST` (the call number makes each one recognisable); anything
/// else is answered the same way, whatever the method.
///
/// ```swift
/// let server = try await SoakServer.start(faultRate: 0.2, seed: 1)
/// // GET \(server.baseURL)/item/3, POST \(server.baseURL)/post/17 …
/// let counts = server.counts
/// await server.shutdown()
/// ```
public final class SoakServer: Sendable {
    /// What the server does instead of a plain answer.
    public enum Fault: String, Sendable, CaseIterable {
        /// Resets the connection (RST) once the request has arrived, before any answer.
        case reset
        /// Sends nothing for ``SoakServer/stall``, then closes the connection.
        case stall
        /// Answers `503 Service Unavailable` (the connection stays open).
        case serverError = "server-error"
        /// Promises ``SoakServer/bodyBytes`` bytes, sends a quarter, then closes the connection.
        case truncated
        /// Sends the body in 8 pieces, 10 ms apart: slow, but a valid answer.
        case slowBody = "slow-body"
    }

    /// What has arrived so far.
    public struct Counts: Sendable, Hashable {
        /// Requests read in full.
        public var requests = 0
        /// Faults played, by kind.
        public var faults: [Fault: Int] = [:]
        /// `POST` requests without an `Idempotency-Key` that arrived for a call already seen.
        public var unkeyedPOSTDuplicates = 0
        /// `POST` requests with an `Idempotency-Key` that arrived again (allowed: retries).
        public var keyedPOSTRepeats = 0
        /// Connections accepted.
        public var connections = 0
    }

    /// The size of every body the server sends.
    public static let bodyBytes = 512
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// How long a stalled answer waits before the connection is closed.
    public let stall: Duration

    private let state: NIOLockedValueBox<SoakState>
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    private init(port: Int, stall: Duration, state: NIOLockedValueBox<SoakState>, channel: any Channel, group: MultiThreadedEventLoopGroup)
    {
        self.port = port
        self.stall = stall
        self.state = state
        self.channel = channel
        self.group = group
    }

    /// Starts a server on 127.0.0.1 and a free port.
    /// - Parameters:
    ///   - faultRate: The share of requests that get a fault, 0 to 1.
    ///   - seed: Picks which requests get which fault.
    ///   - stall: How long a stalled answer holds the connection before closing it (at most 60 s).
    /// - Returns: The running server; call ``shutdown()`` when done.
    /// - Throws: When the socket cannot be bound.
    public static func start(faultRate: Double, seed: UInt64 = 1, stall: Duration = .seconds(3)) async throws -> SoakServer {
        let state = NIOLockedValueBox(
            SoakState(faultRate: min(max(faultRate, 0), 1), generator: SeededGenerator(seed: seed)))
        let boundedStall = min(stall, .seconds(60))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (channel, port) = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SoakHandler(state: state, stall: boundedStall))
                }
            }
            .bindLoopback(shuttingDownOnFailure: group)
        return SoakServer(port: port, stall: boundedStall, state: state, channel: channel, group: group)
    }

    /// What has arrived so far.
    public var counts: Counts { state.withLockedValue { $0.counts } }

    /// Connections open now.
    public var openConnections: Int { state.withLockedValue { $0.open } }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// The server's shared counts and random sequence.
struct SoakState: Sendable {
    let faultRate: Double
    var generator: SeededGenerator
    var counts = SoakServer.Counts()
    var open = 0
    /// How many times each `POST` call arrived, by path and whether it carried a key.
    var posts: [String: Int] = [:]

    /// Records a request and draws what to do with it.
    mutating func arrived(method: String, target: String, keyed: Bool) -> SoakServer.Fault? {
        counts.requests += 1
        if method == "POST" {
            let seen = posts[target, default: 0]
            posts[target] = seen + 1
            if seen > 0 {
                if keyed { counts.keyedPOSTRepeats += 1 } else { counts.unkeyedPOSTDuplicates += 1 }
            }
        }
        let draw = Double(generator.next() >> 11) / Double(1 << 53)
        guard draw < faultRate else { return nil }
        let fault = SoakServer.Fault.allCases[generator.below(SoakServer.Fault.allCases.count)]
        counts.faults[fault, default: 0] += 1
        return fault
    }
}

/// Reads one request at a time (head, then a `Content-Length` body) and answers it.
private final class SoakHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Request heads larger than this close the connection.
    private static let maxHeadBytes = 64 * 1024
    /// Request bodies larger than this close the connection.
    private static let maxBodyBytes = 1 << 20
    private static let body = String(repeating: "s", count: SoakServer.bodyBytes)
    private static let okHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(SoakServer.bodyBytes)\r\n\r\n"

    private let state: NIOLockedValueBox<SoakState>
    private let stall: Duration
    private var received: [UInt8] = []
    /// Set once an answer ends the connection: nothing more is read.
    private var closing = false

    init(state: NIOLockedValueBox<SoakState>, stall: Duration) {
        self.state = state
        self.stall = stall
    }

    func channelActive(context: ChannelHandlerContext) {
        state.withLockedValue {
            $0.counts.connections += 1
            $0.open += 1
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.withLockedValue { $0.open -= 1 }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        received.append(contentsOf: unwrapInboundIn(data).readableBytesView)
        while !closing, let request = nextRequest() {
            answer(context, request)
        }
        if received.count > Self.maxHeadBytes + Self.maxBodyBytes { close(context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context)
    }

    private struct Request {
        var method: String
        var target: String
        var keyed: Bool
    }

    /// Takes one whole request off the front of what was received, or `nil` when it has not all arrived.
    private func nextRequest() -> Request? {
        guard let end = RawHTTP.headEnd(in: received) else { return nil }
        let head = String(decoding: received[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        var length = 0
        var keyed = false
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if lower.hasPrefix("content-length:") {
                length = Int(lower.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            } else if lower.hasPrefix("idempotency-key:") {
                keyed = true
            }
        }
        guard length <= Self.maxBodyBytes else {
            closing = true
            return nil
        }
        guard received.count >= end + length else { return nil }
        received.removeFirst(end + length)
        return Request(
            method: parts.first.map(String.init) ?? "", target: parts.count > 1 ? String(parts[1]) : "/", keyed: keyed)
    }

    private func answer(_ context: ChannelHandlerContext, _ request: Request) {
        let fault = state.withLockedValue { $0.arrived(method: request.method, target: request.target, keyed: request.keyed) }
        let channel = context.channel
        switch fault {
        case nil:
            write(context, Self.okHead + Self.body)
        case .serverError:
            write(context, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
        case .reset:
            closing = true
            RawHTTP.reset(channel)
        case .stall:
            closing = true
            let nanoseconds = stall.components.seconds * 1_000_000_000 + stall.components.attoseconds / 1_000_000_000
            channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { channel.close(promise: nil) }
        case .truncated:
            closing = true
            let sent = Self.okHead + Self.body.prefix(SoakServer.bodyBytes / 4)
            write(context, sent) { channel.close(promise: nil) }
        case .slowBody:
            write(context, Self.okHead)
            let piece = SoakServer.bodyBytes / 8
            for index in 0..<8 {
                channel.eventLoop.scheduleTask(in: .milliseconds(Int64(10 * (index + 1)))) {
                    var buffer = channel.allocator.buffer(capacity: piece)
                    buffer.writeString(String(Self.body.prefix(piece)))
                    channel.writeAndFlush(buffer, promise: nil)
                }
            }
        }
    }

    private func write(_ context: ChannelHandlerContext, _ text: String, then done: (@Sendable () -> Void)? = nil) {
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in done?() }
    }

    private func close(_ context: ChannelHandlerContext) {
        closing = true
        context.close(promise: nil)
    }
}
