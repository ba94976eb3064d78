extension NetworkError {
    /// What went wrong. Compare with `==` against the static members; new kinds may be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Sendable, CaseIterable {
            case invalidRequest = "invalid_request"
            case alreadyStarted = "already_started"
            case cancelled
            case timedOut = "timed_out"
            case dnsFailure = "dns_failure"
            case connectFailure = "connect_failure"
            case connectionClosed = "connection_closed"
            case tlsFailure = "tls_failure"
            case invalidResponse = "invalid_response"
            case httpStatus = "http_status"
            case decoding
            case responseTooLarge = "response_too_large"
            case tooManyRedirects = "too_many_redirects"
            case redirectRefused = "redirect_refused"
            case unsupported
            case noMatchingStub = "no_matching_stub"
            case transportFailure = "transport_failure"
            case authenticationFailed = "authentication_failed"
            case middlewareMisuse = "middleware_misuse"
            case queueFull = "queue_full"
            case soapFault = "soap_fault"
            case shutDown = "shut_down"
            case notCached = "not_cached"
            case circuitOpen = "circuit_open"
            case proxyFailure = "proxy_failure"
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// The request could not be built: bad URL, bad header, unencodable body. Nothing was sent.
        public static let invalidRequest = Kind(.invalidRequest)
        /// A single-use API object was started a second time (or after it finished).
        public static let alreadyStarted = Kind(.alreadyStarted)
        /// The call was cancelled by its caller.
        public static let cancelled = Kind(.cancelled)
        /// A deadline passed; ``NetworkError/phase`` says which part of the call was running.
        public static let timedOut = Kind(.timedOut)
        /// The host name could not be resolved.
        public static let dnsFailure = Kind(.dnsFailure)
        /// A connection could not be established (refused, unreachable).
        public static let connectFailure = Kind(.connectFailure)
        /// The connection was reset or closed before the exchange finished.
        public static let connectionClosed = Kind(.connectionClosed)
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailure = Kind(.tlsFailure)
        /// The server sent something that is not valid HTTP (malformed head, truncated body, conflicting lengths).
        public static let invalidResponse = Kind(.invalidResponse)
        /// The response status was not acceptable for the API (not 2xx by default).
        public static let httpStatus = Kind(.httpStatus)
        /// The response body could not be decoded into the API's output type.
        public static let decoding = Kind(.decoding)
        /// The response body exceeded the configured maximum size.
        public static let responseTooLarge = Kind(.responseTooLarge)
        /// The redirect limit was reached.
        public static let tooManyRedirects = Kind(.tooManyRedirects)
        /// The server redirected somewhere Courier does not follow: a scheme other than `http` and
        /// `https` (`file:`, `ftp:`, `data:`…), from `https` down to `http`, or a 307/308 that
        /// would need a request body that cannot be sent again. Nothing was sent to the target.
        public static let redirectRefused = Kind(.redirectRefused)
        /// The transport cannot do what the request asks (for example an HTTP version it lacks).
        public static let unsupported = Kind(.unsupported)
        /// A strict mock transport had no stub for the request.
        public static let noMatchingStub = Kind(.noMatchingStub)
        /// Another transport failure; ``NetworkError/nativeCode`` and ``NetworkError/message`` keep the transport's own words.
        public static let transportFailure = Kind(.transportFailure)
        /// The server refused the credential and refreshing it failed (or was refused by the
        /// refresh limit); see `AuthRefreshMiddleware`.
        public static let authenticationFailed = Kind(.authenticationFailed)
        /// A middleware broke its contract (a network middleware that did not call `next` exactly
        /// once). Checked in debug builds; a programming error, never retried.
        public static let middlewareMisuse = Kind(.middlewareMisuse)
        /// The ``RequestQueue`` already had as many calls waiting as it allows; nothing was sent.
        public static let queueFull = Kind(.queueFull)
        /// The service answered with a SOAP `Fault` (usually with status 500): the call reached the
        /// service and the service refused it. `CourierXML` reports it with the fault's code, reason
        /// and detail in ``NetworkError/decodedErrorBody`` (read it with `error.soapFault`).
        public static let soapFault = Kind(.soapFault)
        /// The client is shutting down: it took no new call, or its grace period ended a running
        /// one (see ``NetworkClient/shutdown(gracePeriod:)``).
        public static let shutDown = Kind(.shutDown)
        /// The call's ``CachePolicy`` allowed only the response cache (``CachePolicy/cacheOnly``)
        /// and the cache held no usable response; nothing was sent.
        public static let notCached = Kind(.notCached)
        /// The host's circuit breaker is open after repeated failures (see
        /// ``CircuitBreakerPolicy``); nothing was sent. Not retried.
        public static let circuitOpen = Kind(.circuitOpen)
        /// The forward proxy (``ProxyConfiguration``) refused the call or failed it: it asked for
        /// credentials it did not get (``NetworkError/status`` `407`), refused the tunnel, or could
        /// not reach the server. The request did not reach the server through it.
        public static let proxyFailure = Kind(.proxyFailure)

        /// The snake_case name of the kind, for example `timed_out`.
        public var description: String { code.rawValue }

        /// Every kind, in the order they are declared (the errors article lists each).
        public static var all: [Kind] { Code.allCases.map(Kind.init) }
    }

    /// The part of a call that was running when it failed.
    public struct Phase: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Sendable, CaseIterable {
            case building, queued, dns, connect, tls, sending
            case awaitingResponse = "awaiting_response"
            case receiving, validating, decoding, transfer
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// Building and validating the request, before any I/O.
        public static let building = Phase(.building)
        /// Waiting in a queue for a slot.
        public static let queued = Phase(.queued)
        /// Resolving the host name.
        public static let dns = Phase(.dns)
        /// Opening the TCP connection.
        public static let connect = Phase(.connect)
        /// The TLS handshake.
        public static let tls = Phase(.tls)
        /// Sending the request head and body.
        public static let sending = Phase(.sending)
        /// Waiting for the response head.
        public static let awaitingResponse = Phase(.awaitingResponse)
        /// Receiving the response body.
        public static let receiving = Phase(.receiving)
        /// Checking the response status against what the API accepts.
        public static let validating = Phase(.validating)
        /// Decoding the response body.
        public static let decoding = Phase(.decoding)
        /// Somewhere in the transfer, where the transport cannot say more precisely.
        public static let transfer = Phase(.transfer)

        /// The snake_case name of the phase, for example `awaiting_response`.
        public var description: String { code.rawValue }
    }
}
