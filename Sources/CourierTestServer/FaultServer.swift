import CourierTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A loopback HTTP/1.1 server that misbehaves on purpose: it reads a request head, then answers
/// with raw bytes no well-behaved server sends, so tests can check what each transport makes of
/// them. The request path picks the fault: `/fault/<Fault rawValue>`, `/coding/<Encoded rawValue>`,
/// `/mutate/<seed>` (a valid response broken in ways the seed picks: ``ResponseMutation``), or
/// `/script/<name>` (a sequence of answers across calls: ``script(_:_:)``); any other path gets a
/// plain `200 ok`.
///
/// ```swift
/// let server = try await FaultServer.start()
/// // GET \(server.baseURL)/fault/truncated-body
/// await server.shutdown()
/// ```
public final class FaultServer: Sendable {
    /// What the server does after reading the request head.
    public enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Promises 100,000 bytes, sends 1,000, then resets the connection (RST).
        case resetMidBody = "reset-mid-body"
        /// Promises 100,000 bytes, sends 1,000, then closes the connection cleanly (FIN).
        case truncatedBody = "truncated-body"
        /// Closes the connection without sending a byte.
        case closedWithoutResponse = "closed-without-response"
        /// Sends a status line that is not HTTP.
        case malformedStatusLine = "malformed-status-line"
        /// Sends two `Content-Length` headers that disagree.
        case conflictingContentLength = "conflicting-content-length"
        /// Sends `100 Continue` before a `200` with the body `final`.
        case continueResponse = "continue-response"
        /// Sends `103 Early Hints` (with a `Link` header) before a `200` with the body `final`.
        case earlyHints = "early-hints"
        /// Sends a status line, then closes without a header or the blank line that ends a head.
        /// (FoundationNetworking traps on it: "Transfer completed, but there's no response".)
        case headWithoutBlankLine = "head-without-blank-line"
        /// Redirects with a protocol-relative `Location` to this server's port on the IPv6-mapped
        /// loopback address, `//[::ffff:127.0.0.1]:PORT/ok`. (FoundationNetworking traps on it in
        /// `redirectRequest`, before any delegate is asked: "Invalid URL".)
        case redirectToMappedIPv6 = "redirect-to-mapped-ipv6"
        /// A header value with a CR that is not followed by LF (`X-A: one\rtwo`).
        case bareCRInHeader = "bare-cr-in-header"
        /// Whitespace between a header name and its colon (`X-A : one`).
        case spaceBeforeColon = "space-before-colon"
        /// A NUL byte in a header value.
        case nulInHeader = "nul-in-header"
        /// A control character (0x01) in a header value.
        case controlCharacterInHeader = "control-character-in-header"
        /// A header name that is not a token (`X(A): one`).
        case invalidFieldName = "invalid-field-name"
        /// 10,000 header fields.
        case tooManyHeaders = "too-many-headers"
        /// One header of 80,000 bytes (more than 64 KiB, less than libcurl's own 100 KB line limit).
        case oversizedHead = "oversized-head"
        /// 1,000 `103 Early Hints` responses before a `200` with the body `final`.
        case endlessInterim = "endless-interim"
        /// A `Content-Length` of twenty digits (more than any body can be).
        case hugeContentLength = "huge-content-length"
        /// A chunked body `final` followed by trailer fields (`X-Checksum`): valid HTTP/1.1. The
        /// trailers are not part of the head, and the body arrives whole.
        case trailers
        /// A chunked body that does not end: 64 KiB chunks until 24 MiB (past the default 16 MiB body cap) or the client goes away.
        case endlessBody = "endless-body"

        /// The raw value, as used in the path.
        public var description: String { rawValue }
    }

    /// Compressed bodies, at `/coding/<Encoded rawValue>`. Each decodes (where it decodes at all) to
    /// ``FaultServer/decodedText``; the valid ones are sent identity-encoded when the request does
    /// not advertise gzip in `Accept-Encoding`. Every answer says `X-Advertised: yes` or `no`.
    public enum Encoded: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `Content-Encoding: gzip`.
        case gzip
        /// `Content-Encoding: deflate`, in the zlib format.
        case deflate
        /// `Content-Encoding: deflate`, as raw deflate (no zlib header).
        case rawDeflate = "raw-deflate"
        /// `Content-Encoding: gzip, gzip`: gzip twice.
        case doubleGzip = "double-gzip"
        /// 32 MiB of zeros as about 32 KB of gzip.
        case bomb
        /// The same bomb with no `Content-Length`: chunked, so only the bytes received measure it.
        case chunkedBomb = "chunked-bomb"
        /// A gzip body cut in half (the `Content-Length` is right for the half).
        case truncated
        /// A gzip body with its middle overwritten.
        case corrupt
        /// `Content-Encoding: br` (not a coding Courier decodes).
        case unknown
        /// `Content-Encoding: gzip` six times, the body gzipped six times.
        case chained

        /// The raw value, as used in the path.
        public var description: String { rawValue }
    }

    /// What every valid encoded body decodes to: about 43 KB of text.
    public static let decodedText = String(repeating: "Courier decodes this body. ", count: 1600)

    /// ``Encoded/gzip``'s body as sent, for a caller that asked for the raw bytes.
    public static var gzippedText: [UInt8] { TestCompression.compress(Array(decodedText.utf8), .gzip) }

    /// The size of ``Encoded/bomb`` decoded.
    public static let bombBytes = 32 << 20

    /// The size of `/chunked-text` decoded: hex digits of a fixed pseudo-random sequence, gzipped
    /// (a ratio of about 2) and sent chunked, with no `Content-Length`.
    public static let chunkedTextBytes = 8 << 20

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    /// The sequences ``script(_:_:)`` set, shared by every connection.
    let scripts: ScriptBook<ScriptStep>
    /// The connections open and accepted.
    let connections: FaultConnections

    /// Whether it speaks TLS (with the test CA's certificate for `localhost`, HTTP/1.1 only).
    public let usesTLS: Bool

    /// `http://127.0.0.1:<port>`, or `https://localhost:<port>` over TLS.
    public var baseURL: String { usesTLS ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    /// How a response over TLS ends (``start(tls:)``), served at `/tls-end/<rawValue>`: a body
    /// whose end the client can or cannot prove, and a close with or without `close_notify`.
    public enum TLSEnding: String, CaseIterable, Sendable {
        /// No length, not chunked: the body ends where the connection closes, and it closes
        /// without `close_notify`. The end cannot be proven: the call must fail as cut short.
        case closeDelimitedUnclean = "close-delimited-unclean"
        /// No length, not chunked, then `close_notify` and a close: the end is proven.
        case closeDelimitedClean = "close-delimited-clean"
        /// A `Content-Length` body sent whole, then a close without `close_notify`: the length
        /// proves the end.
        case lengthUnclean = "length-unclean"
        /// A chunked body with its last chunk, then a close without `close_notify`.
        case chunkedUnclean = "chunked-unclean"
        /// `204 No Content` without a length, then a close without `close_notify`: a 204 has no
        /// body, so there is no end to prove.
        case noContentUnclean = "no-content-unclean"
    }

    /// The body every ``TLSEnding`` sends: 1,000 bytes.
    public static let tlsEndingBody = String(repeating: "t", count: 1000)

    private init(
        port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, scripts: ScriptBook<ScriptStep>,
        connections: FaultConnections, usesTLS: Bool
    ) {
        self.usesTLS = usesTLS
        self.port = port
        self.channel = channel
        self.group = group
        self.scripts = scripts
        self.connections = connections
    }

    /// Starts a server on 127.0.0.1 and a free port.
    /// - Parameter tls: Whether it speaks TLS (HTTP/1.1; the test CA's certificate for `localhost`).
    /// - Returns: The running server; call ``shutdown()`` when done.
    /// - Throws: When the socket cannot be bound.
    public static func start(tls: Bool = false) async throws -> FaultServer {
        let context = tls ? try TestServer.makeTLSContext(requireClientCertificate: false, protocols: ["http/1.1"]) : nil
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let scripts = ScriptBook<ScriptStep>()
        let connections = FaultConnections((0, 0))
        let (channel, port) = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.withLockedValue { $0 = ($0.open + 1, $0.opened + 1) }
                channel.closeFuture.whenComplete { _ in connections.withLockedValue { $0.open -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    if let context { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
                    try channel.pipeline.syncOperations.addHandler(FaultHandler(scripts: scripts))
                }
            }
            .bindLoopback(shuttingDownOnFailure: group)
        return FaultServer(port: port, channel: channel, group: group, scripts: scripts, connections: connections, usesTLS: tls)
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// Reads bytes until the end of a request head, then plays the fault its path names.
private final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Request heads larger than this are answered with a 431 and a close.
    private static let maxHeadBytes = 64 * 1024
    private let scripts: ScriptBook<FaultServer.ScriptStep>
    private var received: [UInt8] = []
    private var answered = false
    /// Body bytes of a kept-alive request still to be skipped before the next request's head.
    private var skipping = 0

    init(scripts: ScriptBook<FaultServer.ScriptStep>) {
        self.scripts = scripts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        let buffer = unwrapInboundIn(data)
        received.append(contentsOf: buffer.readableBytesView)
        process(context)
    }

    /// Plays the request whose head ``received`` holds, once it is whole.
    private func process(_ context: ChannelHandlerContext) {
        if skipping > 0 {
            let skipped = min(skipping, received.count)
            received.removeFirst(skipped)
            skipping -= skipped
        }
        guard let end = RawHTTP.headEnd(in: received) else {
            if received.count > Self.maxHeadBytes { answer(context, "HTTP/1.1 431 Too Large\r\nContent-Length: 0\r\n\r\n", then: .close) }
            return
        }
        answered = true
        let head = String(decoding: received[..<end], as: UTF8.self)
        let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        if target.hasPrefix("/coding/"), let encoded = FaultServer.Encoded(rawValue: String(target.dropFirst("/coding/".count))) {
            answer(context, encoded: encoded, requestHead: head)
            return
        }
        if target == "/chunked-text" {
            answerChunked(context, bytes: Self.chunkedText, headers: "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n")
            return
        }
        if target.hasPrefix("/script/") {
            play(scripts.nextStep(String(target.dropFirst("/script/".count))), context, headEnd: end, head: head)
            return
        }
        if target.hasPrefix("/tls-end/"), let ending = FaultServer.TLSEnding(rawValue: String(target.dropFirst("/tls-end/".count))) {
            answer(context, ending: ending)
            return
        }
        if target.hasPrefix("/mutate/"), let seed = UInt64(target.dropFirst("/mutate/".count)) {
            let mutated = ResponseMutation.response(seed: seed)
            answer(context, bytes: mutated.bytes, then: mutated.reset ? .reset : .close)
            return
        }
        let name = target.hasPrefix("/fault/") ? String(target.dropFirst("/fault/".count)) : ""
        switch FaultServer.Fault(rawValue: name) {
        case .resetMidBody:
            answer(context, Self.promisedHead + String(repeating: "x", count: 1000), then: .reset)
        case .truncatedBody:
            answer(context, Self.promisedHead + String(repeating: "x", count: 1000), then: .close)
        case .closedWithoutResponse:
            context.close(promise: nil)
        case .malformedStatusLine:
            answer(context, "HTTX/9 two hundred\r\nContent-Length: 2\r\n\r\nok", then: .close)
        case .conflictingContentLength:
            answer(context, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 10\r\n\r\nhello", then: .close)
        case .continueResponse:
            answer(context, "HTTP/1.1 100 Continue\r\n\r\n" + Self.finalResponse, then: .close)
        case .earlyHints:
            answer(context, "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + Self.finalResponse, then: .close)
        case .headWithoutBlankLine:
            answer(context, "HTTP/1.1 200 OK\r\n", then: .close)
        case .redirectToMappedIPv6:
            let port = context.channel.localAddress?.port ?? 0
            let location = "//[::ffff:127.0.0.1]:\(port)/ok"
            answer(context, "HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", then: .close)
        case .bareCRInHeader:
            answer(context, Self.okWith(header: "X-A: one\rtwo"), then: .close)
        case .spaceBeforeColon:
            answer(context, Self.okWith(header: "X-A : one"), then: .close)
        case .nulInHeader:
            answer(context, Self.okWith(header: "X-A: o\u{0}ne"), then: .close)
        case .controlCharacterInHeader:
            answer(context, Self.okWith(header: "X-A: o\u{1}ne"), then: .close)
        case .invalidFieldName:
            answer(context, Self.okWith(header: "X(A): one"), then: .close)
        case .tooManyHeaders:
            answer(context, Self.okWith(header: (0..<10_000).map { "X-Filler-\($0): v" }.joined(separator: "\r\n")), then: .close)
        case .oversizedHead:
            answer(context, Self.okWith(header: "X-Big: " + String(repeating: "a", count: 80_000)), then: .close)
        case .endlessInterim:
            answer(context, String(repeating: "HTTP/1.1 103 Early Hints\r\n\r\n", count: 1000) + Self.finalResponse, then: .close)
        case .hugeContentLength:
            answer(context, "HTTP/1.1 200 OK\r\nContent-Length: 12345678901234567890\r\nConnection: close\r\n\r\nok", then: .close)
        case .trailers:
            answer(
                context,
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\nConnection: close\r\n\r\n"
                    + "5\r\nfinal\r\n0\r\nX-Checksum: 5f\r\nX-Signed: no\r\n\r\n", then: .close)
        case .endlessBody:
            sendEndlessBody(context)
        case nil:
            answer(context, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", then: .close)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private static let text = Array(FaultServer.decodedText.utf8)
    private static let gzipped = TestCompression.compress(text, .gzip)
    private static let bomb = TestCompression.compress([UInt8](repeating: 0, count: FaultServer.bombBytes), .gzip)
    private static let chunkedText: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let digits = Array("0123456789abcdef".utf8)
        let text = (0..<FaultServer.chunkedTextBytes).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return digits[Int(state >> 60)]
        }
        return TestCompression.compress(text, .gzip)
    }()

    /// Sends an encoded body (see ``FaultServer/Encoded``).
    private func answer(_ context: ChannelHandlerContext, encoded: FaultServer.Encoded, requestHead: String) {
        let advertised = requestHead.lowercased().split(separator: "\r\n").contains { line in
            line.hasPrefix("accept-encoding:") && line.contains("gzip")
        }
        let (coding, body): (String, [UInt8])
        switch encoded {
        case .gzip, .deflate, .rawDeflate, .doubleGzip:
            guard advertised else {
                answer(context, bytes: Self.text, headers: "Content-Type: text/plain\r\nX-Advertised: no\r\n")
                return
            }
            switch encoded {
            case .deflate: (coding, body) = ("deflate", TestCompression.compress(Self.text, .zlib))
            case .rawDeflate: (coding, body) = ("deflate", TestCompression.compress(Self.text, .rawDeflate))
            case .doubleGzip: (coding, body) = ("gzip, gzip", TestCompression.compress(Self.gzipped, .gzip))
            default: (coding, body) = ("gzip", Self.gzipped)
            }
        case .bomb: (coding, body) = ("gzip", Self.bomb)
        case .chunkedBomb:
            answerChunked(context, bytes: Self.bomb, headers: "Content-Type: text/plain\r\nContent-Encoding: gzip\r\nX-Advertised: yes\r\n")
            return
        case .truncated: (coding, body) = ("gzip", Array(Self.gzipped.prefix(Self.gzipped.count / 2)))
        case .corrupt:
            var broken = Self.gzipped
            for index in (broken.count / 3)..<(broken.count / 3 + 64) { broken[index] = 0xFF }
            (coding, body) = ("gzip", broken)
        case .unknown: (coding, body) = ("br", Self.gzipped)
        case .chained:
            var layered = Self.text
            for _ in 0..<6 { layered = TestCompression.compress(layered, .gzip) }
            (coding, body) = (Array(repeating: "gzip", count: 6).joined(separator: ", "), layered)
        }
        let headers = "Content-Type: text/plain\r\nContent-Encoding: \(coding)\r\nX-Advertised: \(advertised ? "yes" : "no")\r\n"
        answer(context, bytes: body, headers: headers)
    }

    /// Sends a `200` with `headers` (each ending in CRLF) and `bytes` in chunks of 4 KiB, then closes.
    private func answerChunked(_ context: ChannelHandlerContext, bytes: [UInt8], headers: String) {
        let head = "HTTP/1.1 200 OK\r\n\(headers)Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + bytes.count + bytes.count / 256 + 16)
        buffer.writeString(head)
        var offset = 0
        while offset < bytes.count {
            let count = min(4096, bytes.count - offset)
            buffer.writeString(String(count, radix: 16) + "\r\n")
            buffer.writeBytes(bytes[offset..<(offset + count)])
            buffer.writeString("\r\n")
            offset += count
        }
        buffer.writeString("0\r\n\r\n")
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Sends a `200` with `headers` (each ending in CRLF), a Content-Length and `bytes`, then closes.
    private func answer(_ context: ChannelHandlerContext, bytes: [UInt8], headers: String) {
        let head = "HTTP/1.1 200 OK\r\n\(headers)Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + bytes.count)
        buffer.writeString(head)
        buffer.writeBytes(bytes)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A `200 ok` with one extra header line (given without its CRLF).
    private static func okWith(header: String) -> String {
        "HTTP/1.1 200 OK\r\n\(header)\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    }

    /// The most an endless body sends before the server gives up (bounded, like every fault).
    private static let endlessBodyBytes = 24 << 20

    /// Sends a chunked head, then 64 KiB chunks one after the other (each once the previous is
    /// written, so nothing piles up in the server) until the client goes away or the bound is hit.
    private func sendEndlessBody(_ context: ChannelHandlerContext) {
        let channel = context.channel
        var head = channel.allocator.buffer(capacity: 128)
        head.writeString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        var buffer = channel.allocator.buffer(capacity: 65_546)
        buffer.writeString("10000\r\n")
        buffer.writeRepeatingByte(UInt8(ascii: "x"), count: 65_536)
        buffer.writeString("\r\n")
        let chunk = buffer
        @Sendable func send(_ sent: Int) {
            guard sent < Self.endlessBodyBytes, channel.isActive else {
                channel.close(promise: nil)
                return
            }
            channel.writeAndFlush(chunk).whenComplete { result in
                if case .success = result { send(sent + 65_536) } else { channel.close(promise: nil) }
            }
        }
        channel.writeAndFlush(head).whenComplete { _ in send(0) }
    }

    /// Answers `200 scripted` and reads the connection's next request, after this one's body.
    private func keepAlive(_ context: ChannelHandlerContext, headEnd end: Int, head: String) {
        let length =
            head.lowercased().split(separator: "\r\n").lazy
            .compactMap { line in
                line.hasPrefix("content-length:") ? Int(line.dropFirst("content-length:".count).filter { $0 != " " }) : nil
            }
            .first ?? 0
        let rest = Array(received[end...])
        let skipped = min(max(length, 0), rest.count)
        skipping = max(length, 0) - skipped
        received = Array(rest[skipped...])
        answered = false
        var buffer = context.channel.allocator.buffer(capacity: 64)
        buffer.writeString("HTTP/1.1 200 Scripted\r\nContent-Length: 8\r\n\r\nscripted")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        // A next request already here is played now.
        if !received.isEmpty { process(context) }
    }

    /// Plays one scripted step (``FaultServer/ScriptStep``); `nil` is the plain answer after the
    /// script. `headEnd` and `head` are the request's, for a step that keeps the connection.
    private func play(_ step: FaultServer.ScriptStep?, _ context: ChannelHandlerContext, headEnd: Int, head: String) {
        func scripted(_ status: Int) -> String {
            "HTTP/1.1 \(status) Scripted\r\nContent-Length: 8\r\nConnection: close\r\n\r\nscripted"
        }
        switch step {
        case nil:
            answer(context, scripted(200), then: .close)
        case .status(let status):
            answer(context, scripted(status), then: .close)
        case .slow(let milliseconds):
            let channel = context.channel
            let bytes = Array(scripted(200).utf8)
            channel.eventLoop.scheduleTask(in: .milliseconds(Int64(min(max(milliseconds, 0), 60_000)))) {
                var buffer = channel.allocator.buffer(capacity: bytes.count)
                buffer.writeBytes(bytes)
                channel.writeAndFlush(buffer).whenComplete { _ in channel.close(promise: nil) }
            }
        case .reset:
            RawHTTP.reset(context.channel)
        case .close:
            context.close(promise: nil)
        case .resetAfter(let bytes):
            answer(context, Self.promisedHead + String(repeating: "x", count: min(max(bytes, 0), 99_999)), then: .reset)
        case .keepAliveThenClose:
            answer(context, "HTTP/1.1 200 Scripted\r\nContent-Length: 8\r\n\r\nscripted", then: .close)
        case .keepAlive:
            keepAlive(context, headEnd: headEnd, head: head)
        }
    }

    /// The final answer after interim responses.
    private static let finalResponse = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfinal"

    /// A head that promises far more body than the fault will send.
    private static let promisedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"

    private enum Ending {
        case close
        case reset
        /// A close without TLS's `close_notify`: from the TLS handler's own context, so the close
        /// skips it and the socket closes under it (a plain close where there is no TLS).
        case closeWithoutTLSAlert
    }

    /// Plays a ``FaultServer/TLSEnding``.
    private func answer(_ context: ChannelHandlerContext, ending: FaultServer.TLSEnding) {
        let body = FaultServer.tlsEndingBody
        switch ending {
        case .closeDelimitedUnclean:
            answer(context, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body, then: .closeWithoutTLSAlert)
        case .closeDelimitedClean:
            answer(context, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body, then: .close)
        case .lengthUnclean:
            answer(
                context, "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body,
                then: .closeWithoutTLSAlert)
        case .noContentUnclean:
            answer(context, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", then: .closeWithoutTLSAlert)
        case .chunkedUnclean:
            let chunk = String(body.utf8.count, radix: 16)
            answer(
                context, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\(chunk)\r\n\(body)\r\n0\r\n\r\n",
                then: .closeWithoutTLSAlert)
        }
    }

    private func answer(_ context: ChannelHandlerContext, _ text: String, then ending: Ending) {
        answer(context, bytes: Array(text.utf8), then: ending)
    }

    private func answer(_ context: ChannelHandlerContext, bytes: [UInt8], then ending: Ending) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in
            switch ending {
            case .close:
                channel.close(promise: nil)
            case .reset:
                RawHTTP.reset(channel)
            case .closeWithoutTLSAlert:
                if let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                    tls.close(promise: nil)
                } else {
                    channel.close(promise: nil)
                }
            }
        }
    }
}
