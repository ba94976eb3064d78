/// What an observer learns about one finished call: who made it, where it went, how it ended,
/// and what it cost.
///
/// Every text in a record is safe to use as a log field or a metric label: the endpoint is a
/// bounded label (see ``EndpointLabels``), the host has no user info, and errors carry redacted
/// request summaries.
public struct CallRecord: Sendable {
    /// The call's request id (the same as in its log lines).
    public var requestID: String
    /// A bounded label for the API: the endpoint's type name, or ``EndpointLabels/overflowLabel``.
    public var endpoint: String
    /// The API object's team, if it named one.
    public var team: String?
    /// The request method, for example `GET`.
    public var method: String
    /// The host (and port) the call went to, or an empty string when the request could not be built.
    public var host: String
    /// The response status, when a response arrived.
    public var status: Int?
    /// The failure, or `nil` when the call succeeded.
    public var error: NetworkError? {
        didSet { outcome = CallOutcome(error: error) }
    }
    /// Timings, bytes and attempts.
    public var metrics: RequestMetrics

    /// Creates a record (the client makes them; tests and custom observers may too).
    public init(
        requestID: String, endpoint: String, team: String?, method: String, host: String, status: Int?,
        error: NetworkError?, metrics: RequestMetrics
    ) {
        self.requestID = requestID
        self.endpoint = endpoint
        self.team = team
        self.method = method
        self.host = host
        self.status = status
        self.error = error
        self.metrics = metrics
        self.outcome = CallOutcome(error: error)
    }

    /// How the call ended, as alerts and metrics count it (classified once, when the error is set).
    public private(set) var outcome: CallOutcome
}

/// How a call ended: success, cancelled by its caller, or one class of failure.
public enum CallOutcome: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The call returned its output.
    case success
    /// The caller cancelled it; never counted as a failure.
    case cancelled
    /// The network or the transport failed: DNS, connect, reset, TLS, malformed response.
    case transport
    /// A deadline, connect timeout or stall limit passed.
    case timeout
    /// The server answered 5xx.
    case serverError = "server_error"
    /// The server answered 4xx (or another status the API does not accept).
    case clientError = "client_error"
    /// The body could not be decoded.
    case decoding
    /// The request could not be built or was refused before any I/O (invalid input, misuse).
    case invalidRequest = "invalid_request"
    /// The host's circuit breaker was open and refused the call before any I/O
    /// (``NetworkError/Kind/circuitOpen``): a rule watching only this outcome alerts when a breaker
    /// opens and recovers at the next success.
    case circuitOpen = "circuit_open"

    /// Classifies an error; `nil` is a success.
    /// - Parameter error: The call's error.
    public init(error: NetworkError?) {
        guard let error else {
            self = .success
            return
        }
        switch error.kind {
        case .cancelled: self = .cancelled
        case .timedOut: self = .timeout
        case .httpStatus: self = (error.status ?? 0) >= 500 ? .serverError : .clientError
        case .decoding: self = .decoding
        case .invalidRequest, .alreadyStarted, .middlewareMisuse, .noMatchingStub: self = .invalidRequest
        case .authenticationFailed: self = .clientError
        case .circuitOpen: self = .circuitOpen
        default: self = .transport
        }
    }

    /// Whether this outcome counts as a failure for alerts (everything but success and cancellation).
    public var isFailure: Bool { self != .success && self != .cancelled }

    /// The raw value, for example `server_error`.
    public var description: String { rawValue }
}
