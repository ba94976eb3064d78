extension NetworkError {
    /// Converts anything thrown below the client into a `NetworkError`.
    ///
    /// A `NetworkError` passes through unchanged; `CancellationError` becomes ``Kind/cancelled``;
    /// anything else becomes ``Kind/transportFailure`` keeping the original as ``underlying``.
    ///
    /// - Parameters:
    ///   - error: What was thrown.
    ///   - phase: The phase to report when the error does not say.
    /// - Returns: A `NetworkError`.
    public static func converting(_ error: any Error, phase: Phase) -> NetworkError {
        if let error = error as? NetworkError { return error }
        if error is CancellationError {
            return NetworkError(kind: .cancelled, phase: phase, message: "the call was cancelled")
        }
        return NetworkError(
            kind: .transportFailure,
            phase: phase,
            message: String(describing: error),
            underlying: error
        )
    }

    /// A ``Kind/cancelled`` error in the given phase.
    /// - Parameter phase: Where the call was when it was cancelled.
    /// - Returns: The error.
    public static func cancelled(phase: Phase) -> NetworkError {
        NetworkError(kind: .cancelled, phase: phase, message: "the call was cancelled")
    }

    /// The ``Kind/timedOut`` error a transport stops its transfer with when the call's deadline
    /// passes (see ``RequestContext/onDeadline(_:)``); the client reports its own, with the timeout.
    /// - Parameter phase: Where the call was when the deadline passed.
    /// - Returns: The error.
    public static func deadlinePassed(phase: Phase) -> NetworkError {
        NetworkError(kind: .timedOut, phase: phase, message: "the call's deadline passed")
    }

    /// An ``Kind/invalidRequest`` error: nothing was sent.
    /// - Parameter message: What is wrong with the request.
    /// - Returns: The error.
    public static func invalidRequest(_ message: String) -> NetworkError {
        NetworkError(kind: .invalidRequest, phase: .building, message: message)
    }

    /// A ``Kind/proxyFailure`` error for a proxy that answered `status` instead of carrying the
    /// call (to its `CONNECT`, or to a forwarded request), worded the same by every transport.
    /// - Parameters:
    ///   - status: The proxy's status, for example `407`.
    ///   - proxy: The proxy.
    /// - Returns: The error, in phase `connect`.
    public static func proxyRefused(status: Int, proxy: ProxyServer) -> NetworkError {
        let why =
            status == 407
            ? (proxy.username == nil
                ? "it wants credentials: give them in the proxy URL" : "it refused the credentials of the proxy URL")
            : "it did not carry the call"
        return NetworkError(
            kind: .proxyFailure, phase: .connect, message: "the proxy \(proxy.url) answered \(status): \(why)", status: status)
    }

    /// A ``Kind/tooManyRedirects`` error, worded the same by every transport.
    /// - Parameters:
    ///   - limit: The configured redirect limit.
    ///   - status: The status of the redirect that passed the limit.
    /// - Returns: The error.
    public static func tooManyRedirects(limit: Int, status: Int) -> NetworkError {
        NetworkError(kind: .tooManyRedirects, phase: .receiving, message: "more than \(limit) redirects", status: status)
    }

    /// A ``Kind/responseTooLarge`` error, worded the same by every transport.
    /// - Parameters:
    ///   - limit: The configured limit in bytes.
    ///   - announced: The length the server announced, when that is what passed the limit.
    /// - Returns: The error.
    public static func responseTooLarge(limit: Int, announced: Int64?) -> NetworkError {
        let detail = announced.map { "the server announced \($0) bytes" } ?? "the body passed the limit"
        return NetworkError(kind: .responseTooLarge, phase: .receiving, message: "\(detail); the limit is \(limit) bytes")
    }
}
