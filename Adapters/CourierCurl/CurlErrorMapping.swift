import CCurl
import Courier

/// Maps a finished transfer's `CURLcode` to a `NetworkError` with the precise kind and phase,
/// keeping libcurl's own message. Pure: tested without a network.
enum CurlErrorMapping {
    /// How far a transfer had got, from libcurl's timing counters (microseconds; zero means
    /// "did not happen").
    struct Progress: Equatable {
        var nameLookup: Int64 = 0
        var connect: Int64 = 0
        var tlsHandshake: Int64 = 0
        var preTransfer: Int64 = 0
        var firstByte: Int64 = 0
        var usesTLS = false
        /// Whether the connection was reused (then no lookup or connect happens).
        var reused = false
        /// Whether the final response head was complete. A reply libcurl refuses before then (a
        /// NUL in a header line) failed while the head was awaited, even though bytes arrived.
        var headComplete = true

        /// The phase the transfer was in when it stopped.
        var phase: NetworkError.Phase {
            if firstByte > 0 { return .receiving }
            if preTransfer > 0 { return .awaitingResponse }
            if nameLookup == 0 { return .dns }
            if connect == 0 { return .connect }
            if usesTLS, tlsHandshake == 0 { return .tls }
            return .sending
        }
    }

    /// The error for a failed transfer.
    /// - Parameters:
    ///   - code: libcurl's result.
    ///   - message: The text of the transfer's error buffer (may be empty).
    ///   - progress: How far the transfer had got.
    /// - Returns: The error.
    static func error(code: CURLcode, message: String, progress: Progress) -> NetworkError {
        let text = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
        var (kind, phase) = classify(code, progress: progress)
        if kind == .connectionClosed, isTLSAlert(text) {
            // With TLS 1.3 the server judges the client's certificate after the client has
            // finished its handshake, so a refusal arrives as an alert on the first read.
            (kind, phase) = (.tlsFailure, .tls)
        } else if kind == .connectionClosed, isChunkedDecodingError(text) {
            // libcurl 8 reports a chunked body it cannot parse ("chunk hex-length char not a hex
            // digit", "invalid chunk length") as a receive error: the answer is malformed, as
            // the other transports report it.
            (kind, phase) = (.invalidResponse, .receiving)
        }
        return NetworkError(
            kind: kind, phase: phase, message: "curl: \(text)", nativeCode: .init(domain: "CURLcode", code: Int(code.rawValue)))
    }

    /// Whether libcurl's message reports a chunked body it could not parse.
    static func isChunkedDecodingError(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return lowered.contains("chunk") && !lowered.contains("connection")
    }

    /// Whether libcurl's message reports a TLS alert from the peer (OpenSSL's text, for example
    /// `error:0A00045C:SSL routines::tlsv13 alert certificate required`).
    static func isTLSAlert(_ message: String) -> Bool {
        message.contains("SSL routines") && message.contains(" alert ")
    }

    /// The kind and phase for a code.
    static func classify(_ code: CURLcode, progress: Progress) -> (NetworkError.Kind, NetworkError.Phase) {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return (.dnsFailure, .dns)
        case CURLE_COULDNT_CONNECT:
            return (.connectFailure, .connect)
        case CURLE_OPERATION_TIMEDOUT:
            return (.timedOut, progress.phase)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            return (.tlsFailure, .tls)
        case CURLE_GOT_NOTHING:
            return (.connectionClosed, .awaitingResponse)
        case CURLE_SEND_ERROR:
            return (.connectionClosed, progress.firstByte > 0 ? .receiving : .sending)
        case CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2_STREAM:
            return (.connectionClosed, progress.firstByte > 0 ? .receiving : .awaitingResponse)
        case CURLE_SEND_FAIL_REWIND:
            // libcurl wanted to send the request again on its own (a reused connection died before
            // any answer, or the server refused the HTTP/2 stream; it cannot tell which), but Courier
            // lets it rewind only the body of a request that may be repeated: the connection closed,
            // and the request may have reached the server. Found by `courier-bench soak`.
            return (.connectionClosed, progress.firstByte > 0 ? .receiving : .awaitingResponse)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_BAD_CONTENT_ENCODING, CURLE_RANGE_ERROR, CURLE_HTTP_RETURNED_ERROR:
            return (.invalidResponse, progress.firstByte > 0 && progress.headComplete ? .receiving : .awaitingResponse)
        case CURLE_FILESIZE_EXCEEDED:
            return (.responseTooLarge, .receiving)
        case CURLE_TOO_MANY_REDIRECTS:
            return (.tooManyRedirects, .receiving)
        case CURLE_BAD_FUNCTION_ARGUMENT where progress.firstByte > 0:
            // Once the answer has begun this is the answer's fault: libcurl 7.x reports a chunked
            // body it cannot decode under a coding it was told about ("Failed reading the
            // chunked-encoded stream") with this code.
            return (.invalidResponse, progress.headComplete ? .receiving : .awaitingResponse)
        case CURLE_URL_MALFORMAT, CURLE_BAD_FUNCTION_ARGUMENT:
            return (.invalidRequest, .building)
        case CURLE_UNSUPPORTED_PROTOCOL where progress.preTransfer > 0:
            // After the request went out this is the answer's fault: libcurl refuses a reply
            // without an HTTP status line ("Received HTTP/0.9 when not allowed").
            // No head was read: the status line itself was refused.
            return (.invalidResponse, .awaitingResponse)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_NOT_BUILT_IN, CURLE_UNKNOWN_OPTION:
            return (.unsupported, .building)
        case CURLE_READ_ERROR:
            return (.invalidRequest, .sending)
        default:
            return (.transportFailure, progress.phase)
        }
    }
}
