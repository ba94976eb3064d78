import CCurl
import Courier
import Foundation
import Synchronization

/// One request on its way through the engine: the easy handle, what libcurl's callbacks have
/// delivered so far, and the caller waiting for the head.
///
/// Ownership: the calling task creates it and sets ``headWaiter`` before handing it to the
/// engine; from then on every mutable field is used on the engine thread only (the engine's
/// inbox lock orders the hand-over). That is why it is `@unchecked Sendable`.
final class CurlTransfer: @unchecked Sendable {
    let context: RequestContext
    let version: HTTPVersionPreference
    /// The engine that runs this transfer.
    let engine: CurlEngine
    /// The request being sent (one exchange: the chain's follow-up link handles redirects).
    let request: HTTPRequest
    /// The body, or `nil` for none.
    let body: RequestBody?
    var lifecycle = CurlTransferLifecycle()
    /// The caller waiting for the response head. Resumed exactly once: whoever resumes it takes it
    /// out first (on the engine thread, or in ``CurlEngine/submit(_:)`` before the engine has it).
    /// Unchecked because the check costs an allocation per call on the hot path; the lifecycle
    /// tests and the cancel-race stress test pin the exactly-once rule instead.
    var headWaiter: UnsafeContinuation<TransportResponse, any Error>?

    // Engine-thread state.
    var easy: UnsafeMutableRawPointer?
    var headerList: CurlHeaderList?
    var head: CurlResponseHead
    var finalHead: HTTPResponse?
    /// How often the request was sent again after libcurl's spurious HTTP/2 failures.
    var http2Resends = 0
    /// At most this many resends per request (two spurious failures in a row are already rare).
    static let maxHTTP2Resends = 2
    /// The buffer a streamed body is read from; made when the caller is given the head.
    var bodyBuffer: CurlBodyBuffer?
    /// Body bytes that arrived before the caller was given the head. A small response usually
    /// ends in the same round of libcurl work as its head: it is handed over from here whole,
    /// without a ``CurlBodyBuffer``.
    var earlyBody = Data()
    /// The byte limit of ``earlyBody`` before the transfer pauses (the stream buffer's high water).
    var earlyBodyLimit: Int { engine.configuration.responseBufferBytes }
    var uploadReader: BodyReader?
    /// The task reading a streamed body's producer; made at the first read callback.
    var uploadPump: CurlUploadPump?
    /// Whether the read callback paused the transfer because the producer had nothing yet.
    var uploadPaused = false
    var uploadChunk = Data()
    var uploadOffset = 0
    /// How often libcurl got ready to send the request since the transfer (re)started.
    var requestsSent = 0
    /// Whether libcurl ended the transfer with an error (its handle is then not reused).
    var handleFailed = false
    var receivedBytes = 0
    /// Whether libcurl holds back bytes because the consumer is behind.
    var paused = false
    /// Counts callbacks that moved bytes either way (a counter, not a clock read, so the
    /// callbacks stay cheap). The engine's stall check compares it with what it saw last.
    var activity: UInt64 = 0
    /// The engine's stall check: the count it saw last, and since when it has not changed (or
    /// since the transfer started or resumed from a pause).
    var stallWatch = (seen: UInt64(0), since: ContinuousClock.now)
    /// Courier's own reason for aborting the transfer from a callback (too large, unreadable body).
    var failure: NetworkError?
    /// libcurl's text for the last error (`CURLOPT_ERRORBUFFER`): the buffer of the easy handle
    /// the transfer runs on, `nil` while it has none.
    var errorBuffer: UnsafeMutablePointer<CChar>?

    init(request: HTTPRequest, body: RequestBody?, context: RequestContext, version: HTTPVersionPreference, engine: CurlEngine) {
        self.engine = engine
        self.request = request
        self.body = body
        self.context = context
        self.version = version
        self.head = CurlResponseHead(limits: context.responseHeadLimits)
        engine.liveTransfers.add(1, ordering: .relaxed)
    }

    deinit {
        headerList?.free()
        engine.liveTransfers.subtract(1, ordering: .relaxed)
    }

    var usesTLS: Bool { CurlRuntime.isHTTPS(request.scheme) }
    /// Whether the transfer can run over HTTP/2: with prior knowledge, or over TLS when HTTP/2 is
    /// preferred (libcurl negotiates it through ALPN). A cleartext request that prefers HTTP/2 is
    /// sent over HTTP/1.1 (`CURL_HTTP_VERSION_2TLS`), so the HTTP/2 workarounds never apply to it
    /// (before, a GET that met a reset on plain HTTP/1.1 was sent again below Courier's retry,
    /// out of its count and budget: found by `FaultScriptTests`).
    var mayUseHTTP2: Bool {
        switch version.code {
        case .http1_1: false
        case .http2: usesTLS
        case .http2PriorKnowledge: true
        }
    }
    var isHeadRequest: Bool { request.method == .head }

    /// Whether a failure with `code` may be answered by sending the request again: only with a
    /// libcurl that has the spurious HTTP/2 failures, only for an HTTP/2 transfer and the failures
    /// they cause (framing or stream error, connection died while sending or receiving), at most
    /// ``maxHTTP2Resends`` times, only for a request without a body whose method is idempotent, and
    /// only while the caller has been given nothing (a head that arrived but was not handed over yet
    /// is dropped with the rest).
    func mayResend(after code: CURLcode) -> Bool {
        guard CurlRuntime.hasRandomHTTP2FramingErrors, mayUseHTTP2, http2Resends < Self.maxHTTP2Resends,
            Self.brokenConnectionCodes.contains(code.rawValue), body == nil, failure == nil,
            lifecycle.callerHasNothing
        else { return false }
        switch request.method {
        case .get, .head, .options, .delete, .put: return true
        default: return false
        }
    }

    /// The codes of a connection that broke under the transfer: the framing error itself, and what
    /// the other streams of the connection libcurl then closes end with.
    static let brokenConnectionCodes: Set<UInt32> = [
        CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// libcurl's message for the failure, or empty.
    var errorMessage: String { errorBuffer.map { String(cString: $0) } ?? "" }

    /// Clears what one response left behind, before the same transfer sends the request again.
    func prepareForNextResponse() {
        head = CurlResponseHead(limits: context.responseHeadLimits)
        finalHead = nil
        bodyBuffer = nil
        earlyBody = Data()
        receivedBytes = 0
        failure = nil
        paused = false
        readBodyFromStart()
        requestsSent = 0
        handleFailed = false
        uploadPump?.stop()
        uploadPump = nil
        uploadPaused = false
    }

    // MARK: Callbacks (engine thread, inside curl_multi_perform)

    /// A response header line arrived. Returns the bytes taken; anything else aborts the transfer.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        activity &+= 1
        switch head.take(bytes: line) {
        case .partial, .interimEnd:
            return line.count
        case .invalid(let message):
            failure = ResponseHeadChecks.invalid(message)
            return 0
        case .finalEnd:
            guard let response = head.response else { return line.count }
            // The chain checks every transport's head. The parser already held this one to the
            // size limits; the Content-Length is checked here too so that the transfer stops before
            // its body is read (a small body would otherwise end the transfer first).
            if let problem = ResponseHeadChecks.contentLengthProblem(in: response.headerFields) {
                failure = problem
                return 0
            }
            if !isHeadRequest, let announced = Self.announcedLength(response), announced > Int64(context.maxResponseBytes) {
                failure = NetworkError.responseTooLarge(limit: context.maxResponseBytes, announced: announced)
                return 0
            }
            finalHead = response
            context.recorder.enter(.receiving)
            engine.headCompleted(self)
            return line.count
        }
    }

    /// Response body bytes arrived. Returns the bytes taken, `CURL_WRITEFUNC_PAUSE` to have
    /// libcurl hold them, or 0 to abort.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if isHeadRequest || finalHead == nil { return bytes.count }
        if receivedBytes + bytes.count > context.maxResponseBytes {
            failure = NetworkError.responseTooLarge(limit: context.maxResponseBytes, announced: nil)
            return 0
        }
        let accepted: Bool
        if let bodyBuffer {
            accepted = bodyBuffer.append(Data(bytes))
        } else if earlyBody.count >= earlyBodyLimit {
            accepted = false
        } else {
            if earlyBody.isEmpty { earlyBody = Data(bytes) } else { earlyBody.append(contentsOf: bytes) }
            accepted = true
        }
        guard accepted else {
            paused = true
            engine.notePaused()
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        receivedBytes += bytes.count
        activity &+= 1
        return bytes.count
    }

    /// libcurl is about to send the request: on a connection just opened or reused, for the first
    /// time or because libcurl sends it again on its own (an HTTP/2 stream the server refused, or a
    /// reused connection that died before any answer; libcurl cannot tell the two apart). Counts
    /// such a resend in ``RequestMetrics/transportResends`` and allows one, only for a request that
    /// may be repeated (the dead connection may have delivered it). Returns `false` to stop the
    /// transfer instead.
    ///
    /// It is not drawn from the retry budget: with libcurl 7.88 most such resends follow libcurl's
    /// own spurious HTTP/2 failures (curl issue 10634), well over 100 a second under load
    /// (`CurlResendTests`), which the budget would turn into failed calls.
    func willSendRequest() -> Bool {
        requestsSent += 1
        if requestsSent > 1 {
            guard requestsSent == 2, RetryPolicy.mayRepeat(request, body: body) else {
                let reason =
                    requestsSent > 2
                    ? "it was sent twice already"
                    : "the server may have received it, and \(request.method) without an Idempotency-Key may not be repeated"
                failure = NetworkError(
                    kind: .connectionClosed, phase: .awaitingResponse,
                    message: "curl: the connection closed before any answer and libcurl would send the request again; \(reason)")
                return false
            }
            context.recorder.update { $0.transportResends += 1 }
        }
        context.recorder.enter(body == nil ? .awaitingResponse : .sending)
        return true
    }

    /// libcurl rewinds the body to send the request again (set only for a request that may be
    /// repeated, with a body that can be read again).
    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        guard offset == 0, origin == SEEK_SET, body?.streamSource == nil else { return CURL_SEEKFUNC_CANTSEEK }
        readBodyFromStart()
        return CURL_SEEKFUNC_OK
    }

    /// The next read callback reads the (replayable) body from its first byte.
    private func readBodyFromStart() {
        uploadReader = nil
        uploadChunk = Data()
        uploadOffset = 0
    }

    /// libcurl wants request body bytes. Returns how many were written, 0 at the end, or
    /// `CURL_READFUNC_ABORT` when the body cannot be read.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let stream = body?.streamSource { return sendStreamedBody(stream, into: buffer) }
        while uploadOffset >= uploadChunk.count {
            do {
                if uploadReader == nil { uploadReader = body?.makeReader(chunkSize: max(16 * 1024, buffer.count)) }
                guard let next = try uploadReader?.next() else {
                    context.recorder.enter(.awaitingResponse)
                    return 0
                }
                uploadChunk = next
                uploadOffset = 0
            } catch {
                failure = NetworkError.converting(error, phase: .sending)
                return Int(CURL_READFUNC_ABORT)
            }
        }
        let count = min(buffer.count, uploadChunk.count - uploadOffset)
        uploadChunk.withUnsafeBytes { source in
            guard let base = source.baseAddress, let target = buffer.baseAddress else { return }
            target.copyMemory(from: base + uploadOffset, byteCount: count)
        }
        uploadOffset += count
        activity &+= 1
        return count
    }

    /// The read callback for a streamed body: bytes the pump holds, or a pause until it has some.
    private func sendStreamedBody(_ stream: BodyStream, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if uploadPump == nil {
            uploadPump = CurlUploadPump(
                chunks: stream.open(), highWater: engine.configuration.responseBufferBytes, transfer: self)
        }
        guard let pump = uploadPump else { return Int(CURL_READFUNC_ABORT) }
        switch pump.take(upTo: buffer.count) {
        case .bytes(let chunk):
            chunk.withUnsafeBytes { source in
                guard let base = source.baseAddress, let target = buffer.baseAddress else { return }
                target.copyMemory(from: base, byteCount: chunk.count)
            }
            activity &+= 1
            return chunk.count
        case .wait:
            uploadPaused = true
            return Int(CURL_READFUNC_PAUSE)
        case .end:
            context.recorder.enter(.awaitingResponse)
            return 0
        case .failed(let error):
            failure = error
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Why a transfer libcurl ended as complete is not: a body over HTTPS that ends only where the
    /// connection closes (HTTP/1.x, no `Content-Length`, not chunked) on a libcurl that cannot
    /// tell a TLS close without `close_notify` from a clean one (7.x; see
    /// `CurlRuntime.detectsUncleanTLSClose`). Its end cannot be proven, so it is reported as cut
    /// short, never as whole. `nil` for every other transfer.
    var unprovenEnd: NetworkError? {
        guard !CurlRuntime.detectsUncleanTLSClose, usesTLS, head.isHTTP1, !isHeadRequest,
            let response = finalHead
        else { return nil }
        guard Self.hasBody(response), response.headerFields[.contentLength] == nil,
            !response.headerFields[values: .transferEncoding].contains(where: { $0.lowercased().contains("chunked") })
        else { return nil }
        return NetworkError(
            kind: .connectionClosed, phase: .receiving,
            message:
                "the response had no length and ended where the TLS connection closed; libcurl \(CurlRuntime.version) "
                + "cannot tell a close without close_notify from a clean one, so its end cannot be proven")
    }

    /// Whether a final response's status allows a body (not 1xx, 204 or 304).
    static func hasBody(_ response: HTTPResponse) -> Bool {
        let code = response.status.code
        return code >= 200 && code != 204 && code != 304
    }

    /// The `Content-Length` of a response that has a body, if announced.
    static func announcedLength(_ response: HTTPResponse) -> Int64? {
        guard hasBody(response),
            let value = response.headerFields.first(where: { $0.name == .contentLength })?.value
        else { return nil }
        return Int64(value)
    }
}

// Each callback gets the transfer as its user data. The transfer is alive while libcurl can call
// them: the engine keeps it in its table for as long as its handle is on the multi handle.

/// `CURLOPT_HEADERFUNCTION`: routes to the transfer passed as `CURLOPT_HEADERDATA`.
let curlHeaderCallback: ccurl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// `CURLOPT_WRITEFUNCTION`: routes to the transfer passed as `CURLOPT_WRITEDATA`.
let curlWriteCallback: ccurl_data_callback = { data, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// `CURLOPT_READFUNCTION`: routes to the transfer passed as `CURLOPT_READDATA`.
let curlReadCallback: ccurl_read_callback = { buffer, size, count, user in
    guard let user else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

/// `CURLOPT_PREREQFUNCTION`: the connection is ready and the request is about to be sent.
let curlPrereqCallback: ccurl_prereq_callback = { user, _, _, _, _ in
    guard let user else { return Int32(CURL_PREREQFUNC_OK) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.willSendRequest() ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
}

/// `CURLOPT_SEEKFUNCTION`: libcurl sends the request again on its own and rewinds the body.
let curlSeekCallback: ccurl_seek_callback = { user, offset, origin in
    guard let user else { return CURL_SEEKFUNC_CANTSEEK }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.rewindBody(to: Int64(offset), origin: origin)
}
