import CourierTestSupport
import NIOCore
import NIOHTTP1

/// Reads one request at a time and carries out its ``ServerAction``.
///
/// Runs on its channel's event loop only; scheduled work uses the isolated event-loop view so it
/// stays on that loop.
final class RouteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The most request-body bytes kept for the echo (the rest is only counted).
    private static let maxKeptBodyBytes = 1 << 20

    /// How long a request waits at a gate nobody opens before it is answered `503`.
    static let maxHold: TimeAmount = .seconds(60)

    private let statistics: ServerStatistics
    private let gates: HoldGates
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyLength = 0
    /// The request body's CRC-32, kept for `/digest` only (``PatternBody/Digest``).
    private var digest: PatternBody.Checksum?
    /// Whether a request was received and its response not finished yet.
    private var inFlight = false
    /// The request waiting at a gate now (0: none); the gate and the time limit both resume it,
    /// and only the first one that comes answers.
    private var heldToken: UInt64 = 0
    private var holds: UInt64 = 0

    init(statistics: ServerStatistics, gates: HoldGates) {
        self.statistics = statistics
        self.gates = gates
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if inFlight { statistics.requestEnded() }
            statistics.requestStarted(target: head.uri)
            inFlight = true
            self.head = head
            body.removeAll(keepingCapacity: true)
            bodyLength = 0
            let digests = head.uri == "/digest" || InventoryService.digests(method: head.method.rawValue, uri: head.uri)
            digest = digests ? PatternBody.Checksum() : nil
        case .body(let buffer):
            bodyLength += buffer.readableBytes
            if digest != nil { buffer.withUnsafeReadableBytes { digest?.update($0) } }
            let room = Self.maxKeptBodyBytes - body.count
            if room > 0 { body.append(contentsOf: buffer.readableBytesView.prefix(room)) }
        case .end:
            guard let head else { return }
            if let digest {
                let answer = PatternBody.Digest(bodyLength: bodyLength, crc32: digest.value)
                return perform(Route.json(answer), for: head, context: context)
            }
            let action = Route.resolve(
                method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body,
                bodyLength: bodyLength
            )
            perform(action, for: head, context: context)
        }
    }

    private func perform(_ action: ServerAction, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        let sendsBody = request.method != .HEAD
        switch action {
        case .respond(let status, let headers, let bytes):
            var fields = HTTPHeaders(headers)
            if !fields.contains(name: "content-length"), status >= 200, status != 204, status != 304 {
                fields.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
            }
            writeHead(status: status, headers: fields, request: request, context: context)
            if sendsBody, !bytes.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil)
            }
            finish(request: request, context: context)
        case .delay(let milliseconds, let next):
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(milliseconds)) {
                guard context.channel.isActive else { return }
                self.perform(next.action, for: request, context: context)
            }
        case .hold(let name, let next):
            holds += 1
            heldToken = holds
            let token = holds
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            let nextAction = NIOLoopBound(next.action, eventLoop: loop)
            gates.wait(at: name) {
                loop.execute { bound.value.0.resumeHeld(token, with: nextAction.value, for: request, context: bound.value.1) }
            }
            loop.assumeIsolated().scheduleTask(in: Self.maxHold) {
                self.resumeHeld(token, with: Route.text(503, "the gate \(name) was never opened"), for: request, context: context)
            }
        case .bytes(let count):
            writeHead(
                status: 200, headers: ["Content-Length": String(count), "Content-Type": "application/octet-stream"], request: request,
                context: context)
            if sendsBody {
                var remaining = count
                let piece = ByteBuffer(repeating: UInt8(ascii: "x"), count: min(count, 64 * 1024))
                while remaining > 0 {
                    let size = min(remaining, piece.readableBytes)
                    context.write(wrapOutboundOut(.body(.byteBuffer(piece.getSlice(at: 0, length: size) ?? piece))), promise: nil)
                    remaining -= size
                }
            }
            finish(request: request, context: context)
        case .cut(let status, let headers, let bytes, let after):
            // The head first, on its own, so that the client has it before the cut: then the
            // bytes, and the close.
            writeHead(status: status, headers: HTTPHeaders(headers), request: request, context: context)
            context.flush()
            endRequest()
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(20)) {
                guard context.channel.isActive else { return }
                let part = sendsBody ? ByteBuffer(bytes: bytes.prefix(after)) : ByteBuffer()
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(part)))).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
        case .pattern(let count):
            writeHead(
                status: 200, headers: ["Content-Length": String(count), "Content-Type": "application/octet-stream"], request: request,
                context: context)
            guard sendsBody else { return finish(request: request, context: context) }
            sendPattern(block: 0, remaining: count, request: request, context: context)
        case .split(let headers, let bytes, let delay):
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
            writeHead(status: 200, headers: fields, request: request, context: context)
            context.flush()
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) {
                guard context.channel.isActive else { return }
                if sendsBody { context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil) }
                self.finish(request: request, context: context)
            }
        case .stream(let chunks, let size, let delay, let gate):
            writeHead(status: 200, headers: ["Content-Type": "application/octet-stream"], request: request, context: context)
            context.flush()
            let chunk = ByteBuffer(repeating: UInt8(ascii: "s"), count: size)
            guard let gate, chunks > 1 else {
                return streamChunk(remaining: chunks, chunk: chunk, delay: delay, request: request, context: context)
            }
            // The first chunk now; the rest wait at the gate (or for the time limit).
            if request.method != .HEAD { context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil) }
            holds += 1
            heldToken = holds
            let token = holds
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            let resume = { @Sendable in
                loop.execute {
                    bound.value.0.resumeStream(
                        token, remaining: chunks - 1, chunk: chunk, delay: delay, request: request, context: bound.value.1)
                }
            }
            gates.wait(at: gate, resume: resume)
            loop.assumeIsolated().scheduleTask(in: Self.maxHold) {
                self.resumeStream(token, remaining: chunks - 1, chunk: chunk, delay: delay, request: request, context: context)
            }
        }
    }

    /// Goes on with a stream held at its gate, once (the gate or the time limit, whichever comes first).
    private func resumeStream(
        _ token: UInt64, remaining: Int, chunk: ByteBuffer, delay: Int64, request: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        guard heldToken == token else { return }
        heldToken = 0
        streamChunk(remaining: remaining, chunk: chunk, delay: delay, request: request, context: context)
    }

    private func resumeHeld(_ token: UInt64, with action: ServerAction, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard heldToken == token, context.channel.isActive else { return }
        heldToken = 0
        perform(action, for: request, context: context)
    }

    private func streamChunk(remaining: Int, chunk: ByteBuffer, delay: Int64, request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard remaining > 0 else {
            finish(request: request, context: context)
            return
        }
        if request.method != .HEAD {
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) {
            self.streamChunk(remaining: remaining - 1, chunk: chunk, delay: delay, request: request, context: context)
        }
    }

    /// Writes pattern blocks one after the other, each once the previous has gone out, so a slow
    /// reader holds the server back instead of a gigabyte piling up in it.
    private func sendPattern(block: Int, remaining: Int, request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard remaining > 0 else { return finish(request: request, context: context) }
        let size = min(remaining, PatternBody.blockBytes)
        let buffer = ByteBuffer(bytes: PatternBody.block(block, count: size))
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenSuccess {
            self.sendPattern(block: block + 1, remaining: remaining - size, request: request, context: context)
        }
    }

    private func writeHead(status: Int, headers: HTTPHeaders, request: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = headers
        if !request.isKeepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        endRequest()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        endRequest()
    }

    private func endRequest() {
        guard inFlight else { return }
        inFlight = false
        statistics.requestEnded()
    }

    private func finish(request: HTTPRequestHead, context: ChannelHandlerContext) {
        endRequest()
        let keepAlive = request.isKeepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if !keepAlive { context.close(promise: nil) }
        }
    }
}
