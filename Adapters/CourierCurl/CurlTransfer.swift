import CCurl
import Courier
import Foundation
import Synchronization

/// One request on its way through the engine: what the call asked for, and its state
/// (``CurlTransferState``), which holds what exists in each phase: the caller's continuation, the
/// attempt on the multi handle, the head, the body.
///
/// Ownership: the calling task creates it and hands it to the engine with its continuation; from
/// then on ``state`` is used on the engine thread only (the engine's inbox lock orders the
/// hand-over). That is why it is `@unchecked Sendable`.
final class CurlTransfer: @unchecked Sendable {
    let context: RequestContext
    let version: HTTPVersionPreference
    /// The engine that runs this transfer.
    let engine: CurlEngine
    /// The request being sent (one exchange: the chain's follow-up link handles redirects).
    let request: HTTPRequest
    /// The body, or `nil` for none.
    let body: RequestBody?
    /// Where the transfer is, with what exists there (engine thread).
    var state = CurlTransferState.created
    /// How often the request was sent again after libcurl's spurious HTTP/2 failures (engine thread).
    var http2Resends = 0
    /// At most this many resends per request (two spurious failures in a row are already rare).
    static let maxHTTP2Resends = 2
    /// Whether the caller takes the body only whole (``RequestContext/takesBodyWhole``): its
    /// stream then gathers the bytes into one buffer, woken only when much has arrived or the body
    /// ends (see ``CurlBodyBuffer``), instead of handing over each piece libcurl writes.
    let gathersBody: Bool

    init(request: HTTPRequest, body: RequestBody?, context: RequestContext, version: HTTPVersionPreference, engine: CurlEngine) {
        self.engine = engine
        self.request = request
        self.body = body
        self.context = context
        self.version = version
        gathersBody = context.takesBodyWhole
        usesTLS = CurlRuntime.isHTTPS(request.scheme)
        isHeadRequest = request.method == .head
        engine.liveTransfers.add(1, ordering: .relaxed)
    }

    deinit {
        engine.liveTransfers.subtract(1, ordering: .relaxed)
    }

    /// Whether the request goes over TLS. Read once: `HTTPRequest` parses its pseudo-header
    /// fields at every read of `scheme` and `method`, and the callbacks ask per piece.
    let usesTLS: Bool
    /// Whether the transfer can run over HTTP/2: with prior knowledge, or over TLS when HTTP/2 is
    /// preferred (libcurl negotiates it through ALPN). A cleartext request that prefers HTTP/2 is
    /// sent over HTTP/1.1 (`CURL_HTTP_VERSION_2TLS`), so the HTTP/2 workarounds never apply to it
    /// (before, a GET that met a reset on plain HTTP/1.1 was sent again below Courier's retry,
    /// out of its count and budget: found by `FaultScriptTests`).
    var mayUseHTTP2: Bool {
        if version == .http1_1 { return false }
        if version == .http2PriorKnowledge { return true }
        return usesTLS
    }
    /// Whether the request is a `HEAD` (its response has no body); read once, like ``usesTLS``.
    let isHeadRequest: Bool

    /// Whether a failure with `code` may be answered by sending the request again: only with a
    /// libcurl that has the spurious HTTP/2 failures, only for an HTTP/2 transfer and the failures
    /// they cause (framing or stream error, connection died while sending or receiving), at most
    /// ``maxHTTP2Resends`` times, only for a request without a body that may go again (``RepeatRule``), and
    /// only while the caller has been given nothing (a head that arrived but was not handed over yet
    /// is dropped with the rest; a head held for its whole body is not: the server answered).
    /// - Parameter spuriousFailures: Whether libcurl has the spurious failures (the linked one's
    ///   answer by default; tests pass both).
    func mayResend(after code: CURLcode, spuriousFailures: Bool = CurlRuntime.hasRandomHTTP2FramingErrors) -> Bool {
        guard spuriousFailures, mayUseHTTP2, http2Resends < Self.maxHTTP2Resends,
            Self.brokenConnectionCodes.contains(code.rawValue), body == nil,
            state.callerHasNothing, state.withAttempt({ $0.failure == nil && !$0.holdsHead }) == true
        else { return false }
        return RepeatRule.mayRepeat(request, body: nil)
    }

    /// Whether the final head waits for its whole body (``CurlAttempt/holdsHead``).
    var holdsHead: Bool { state.withAttempt { $0.holdsHead } ?? false }

    /// The codes of a connection that broke under the transfer: the framing error itself, and what
    /// the other streams of the connection libcurl then closes end with.
    static let brokenConnectionCodes: Set<UInt32> = [
        CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    // MARK: Callbacks (engine thread, inside curl_multi_perform or curl_easy_pause)
    //
    // Each changes the state through one transition and calls no libcurl function. With no
    // attempt (the transfer was stopped), each refuses: libcurl then ends the transfer.

    /// A response header line arrived. Returns the bytes taken; anything else aborts the transfer.
    /// After the final head, lines are trailers: dropped, but held to the head's byte limit.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        switch state.readHeaderLine(line) {
        case nil:
            return 0
        case .partial, .interimEnd:
            return line.count
        case .invalid(let message):
            abort(ResponseHeadChecks.invalid(message))
            return 0
        case .finalEnd:
            guard let response = state.withAttempt({ $0.head.response }) ?? nil else { return line.count }
            let announced = isHeadRequest ? nil : Self.announcedLength(response)
            if let problem = problem(with: response, announced: announced) {
                abort(problem)
                return 0
            }
            state.withAttempt { $0.announcedLength = announced }
            if state.headArrived(response) {
                context.recorder.enter(.receiving)
                engine.readyHeads.append(self)
            }
            return line.count
        }
    }

    /// Why the transfer must stop at this final head, before its body is read. The chain checks
    /// every transport's head; the parser already held this one to the size limits. The
    /// `Content-Length` is checked here too so that the transfer stops before its body is read (a
    /// small body would otherwise end the transfer first).
    private func problem(with response: HTTPResponse, announced: Int64?) -> NetworkError? {
        if let problem = ResponseHeadChecks.contentLengthProblem(in: response.headerFields) { return problem }
        if let announced, announced > Int64(context.maxResponseBytes) {
            return NetworkError.responseTooLarge(limit: context.maxResponseBytes, announced: announced)
        }
        return nil
    }

    /// Records why a callback aborts the transfer: libcurl's completion then reports this error.
    private func abort(_ error: NetworkError) {
        state.withAttempt { $0.failure = error }
    }

    /// Response body bytes arrived. Returns the bytes taken, `CURL_WRITEFUNC_PAUSE` to have
    /// libcurl hold them, or 0 to abort.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if isHeadRequest { return bytes.count }
        let maxBytes = context.maxResponseBytes
        // Gathered bytes have no high water (see ``CurlBodyBuffer``); the size limit bounds them.
        let earlyLimit = gathersBody ? Int.max : engine.configuration.responseBufferBytes
        switch state.receive(bytes, earlyLimit: earlyLimit, maxBytes: maxBytes) {
        case .taken:
            return bytes.count
        case .wake(let buffer):
            engine.readersToWake.append(buffer)
            return bytes.count
        case .pause:
            engine.notePaused()
            return Int(CURL_WRITEFUNC_PAUSE)
        case .tooLarge:
            abort(NetworkError.responseTooLarge(limit: maxBytes, announced: nil))
            return 0
        }
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
        guard
            let sent = state.withAttempt({ attempt -> Int in
                attempt.requestsSent += 1
                return attempt.requestsSent
            })
        else { return false }
        if sent > 1 {
            guard sent == 2, RepeatRule.mayRepeat(request, body: body) else {
                let reason =
                    sent > 2
                    ? "it was sent twice already"
                    : "the server may have received it, and \(request.method) without an Idempotency-Key may not be repeated"
                abort(
                    NetworkError(
                        kind: .connectionClosed, phase: .awaitingResponse,
                        message: "curl: the connection closed before any answer and libcurl would send the request again; \(reason)"))
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
        let rewound = state.withAttempt { attempt -> Bool in
            guard offset == 0, origin == SEEK_SET, attempt.upload.rewind() else { return false }
            attempt.sentBytes = 0
            return true
        }
        guard rewound == true else { return CURL_SEEKFUNC_CANTSEEK }
        context.reportBytesSent(0)
        return CURL_SEEKFUNC_OK
    }

    /// libcurl wants request body bytes. Returns how many were written, 0 at the end,
    /// `CURL_READFUNC_PAUSE` while a producer has nothing yet, or `CURL_READFUNC_ABORT` when the body
    /// cannot be read.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let highWater = engine.configuration.responseBufferBytes
        var sent: Int64 = 0
        let step = state.withAttempt { attempt -> CurlUpload.Step in
            let step = attempt.upload.read(into: buffer) { CurlUploadPump(chunks: $0.open(), highWater: highWater, transfer: self) }
            switch step {
            case .wrote(let count):
                attempt.activity &+= 1
                attempt.sentBytes += Int64(count)
                sent = attempt.sentBytes
            case .failed(let error): attempt.failure = error
            case .end, .pause: break
            }
            return step
        }
        switch step {
        case .wrote(let count)?:
            context.reportBytesSent(sent)
            return count
        case .end?:
            context.recorder.enter(.awaitingResponse)
            return 0
        case .pause?:
            return Int(CURL_READFUNC_PAUSE)
        case .failed?, nil:
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Why a transfer libcurl ended as complete is not: a body over HTTPS that ends only where the
    /// connection closes (HTTP/1.x, no `Content-Length`, not chunked) on a libcurl that cannot
    /// tell a TLS close without `close_notify` from a clean one (7.x; see
    /// `CurlRuntime.detectsUncleanTLSClose`). Its end cannot be proven, so it is reported as cut
    /// short, never as whole. `nil` for every other transfer.
    var unprovenEnd: NetworkError? {
        guard !CurlRuntime.detectsUncleanTLSClose, usesTLS, !isHeadRequest, state.withAttempt({ $0.head.isHTTP1 }) == true,
            let response = state.finalHead
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
