#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOPosix
    import NIOSSL

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Maps what AsyncHTTPClient and SwiftNIO throw to `NetworkError` kinds, the same kinds the
    /// other transports give for the same fault.
    enum AsyncHTTPClientErrorMapping {
        /// The `NetworkError` for what AsyncHTTPClient threw.
        /// - Parameters:
        ///   - error: What it threw.
        ///   - phase: The call's phase then.
        ///   - writtenAtOnce: Whether the request was written in one go (no body, or a buffered
        ///     one), so that a write that found the connection closed means no byte left.
        ///   - proxy: The proxy the call went through, if any.
        static func error(
            _ error: any Error, phase: NetworkError.Phase, writtenAtOnce: Bool = false, proxy: ProxyServer? = nil
        ) -> NetworkError {
            if let error = error as? NetworkError { return error }
            if let proxy, let refusal = error as? HTTPClientError {
                // AsyncHTTPClient tells `407` from the rest of a failed `CONNECT`, without the status.
                if refusal == .proxyAuthenticationRequired { return .proxyRefused(status: 407, proxy: proxy) }
                if refusal == .invalidProxyResponse {
                    return NetworkError(
                        kind: .proxyFailure, phase: .connect,
                        message: "the proxy \(proxy.url) did not open a tunnel (async-http-client: \(refusal))",
                        nativeCode: .init(domain: "HTTPClientError", code: 0), underlying: refusal)
                }
            }
            if error is CancellationError { return .cancelled(phase: phase) }
            let (kind, mappedPhase) = classify(error, phase: phase)
            if kind == .cancelled { return .cancelled(phase: mappedPhase) }
            var mapped = NetworkError(
                kind: kind, phase: mappedPhase, message: "async-http-client: \(String(describing: error))",
                nativeCode: .init(domain: String(describing: type(of: error)), code: 0), underlying: error)
            // `REFUSED_STREAM`: the server processed nothing (RFC 9113 §8.7). A stream dropped by a
            // `GOAWAY` arrives from NIOHTTP2 as `CANCEL`, the same code a server's own reset uses,
            // so it cannot be told apart and is not marked.
            if let closed = error as? NIOHTTP2Errors.StreamClosed, closed.errorCode == .refusedStream {
                mapped.requestNotProcessed = true
            }
            // A pooled connection the server had closed while it sat idle, found closed by the
            // request's write: no byte left. (A body written in parts may fail a later part after
            // the head went out: not marked.)
            if writtenAtOnce, let channel = error as? ChannelError, channel == .ioOnClosedChannel, mappedPhase != .receiving {
                mapped.requestNotProcessed = true
            }
            return mapped
        }

        static func classify(_ error: any Error, phase: NetworkError.Phase) -> (NetworkError.Kind, NetworkError.Phase) {
            switch error {
            case let error as HTTPClientError:
                return classify(error, phase: phase)
            case let error as NIOConnectionError:
                let resolved = error.dnsAError == nil || error.dnsAAAAError == nil
                return resolved && !error.connectionErrors.isEmpty ? (.connectFailure, .connect) : (.dnsFailure, .dns)
            case is SocketAddressError:
                return (.dnsFailure, .dns)
            case let error as IOError:
                switch error.errnoCode {
                case ECONNREFUSED, ENETUNREACH, EHOSTUNREACH: return (.connectFailure, .connect)
                // A Unix socket path with no socket there, or not ours to use: only connecting
                // finds that, before any byte of the request went out.
                case ENOENT where phase != .sending && phase != .receiving, ENOTSOCK where phase != .sending && phase != .receiving,
                    EACCES where phase != .sending && phase != .receiving:
                    return (.connectFailure, .connect)
                case ETIMEDOUT: return (.timedOut, phase)
                default: return (.connectionClosed, phase)
                }
            case let error as ChannelError:
                switch error {
                case .connectTimeout: return (.timedOut, .connect)
                case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: return (.connectionClosed, phase)
                default: return (.transportFailure, phase)
                }
            case let error as NIOSSLError where error == .uncleanShutdown:
                // The TLS connection closed without `close_notify`: a cut connection, not a failed
                // handshake (during a body AsyncHTTPClient reports it when the body's end cannot
                // be proven otherwise).
                return (.connectionClosed, phase == .sending ? .awaitingResponse : phase)
            case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
                return (.tlsFailure, .tls)
            case let error as HTTPParserError:
                // The stream ending inside a body the head announced is a closed connection, as
                // the other transports report it; anything else is a malformed response.
                if error == .invalidEOFState, phase == .receiving { return (.connectionClosed, .receiving) }
                return (.invalidResponse, phase == .sending ? .awaitingResponse : phase)
            case is NIOHTTP2Errors.StreamClosed:
                // The server reset the stream under the request (or NIOHTTP2 dropped it after a
                // `GOAWAY`): the exchange was cut, as a closed connection cuts it over HTTP/1.1.
                return (.connectionClosed, phase)
            case is NIOHTTPDecoderError:
                // Bytes the decoder cannot place, such as a second response after the first
                // (`unsolicitedResponse`): the answer is malformed.
                return (.invalidResponse, phase == .sending ? .awaitingResponse : phase)
            default:
                return (.transportFailure, phase)
            }
        }

        private static func classify(_ error: HTTPClientError, phase: NetworkError.Phase) -> (NetworkError.Kind, NetworkError.Phase) {
            switch error {
            case .connectTimeout, .getConnectionFromPoolTimeout: return (.timedOut, .connect)
            case .tlsHandshakeTimeout: return (.timedOut, .tls)
            case .readTimeout, .writeTimeout, .deadlineExceeded: return (.timedOut, phase)
            case .remoteConnectionClosed, .uncleanShutdown: return (.connectionClosed, phase)
            case .bodyLengthMismatch: return (.connectionClosed, .receiving)
            case .cancelled, .requestStreamCancelled: return (.cancelled, phase)
            // (AsyncHTTPClient no longer throws its deprecated header errors; they fall to `default`.)
            case .invalidURL, .emptyHost, .emptyScheme, .traceRequestWithBody, .identityCodingIncorrectlyPresent:
                return (.invalidRequest, .building)
            case .redirectLimitReached, .redirectCycleDetected: return (.tooManyRedirects, .receiving)
            case .contentLengthMissing: return (.invalidResponse, phase)
            default: return (.transportFailure, phase)
            }
        }
    }
#endif
