import Foundation

/// The one error every Courier call reports.
///
/// `NetworkError` is a struct around a private code, so new kinds can be added without breaking
/// a caller's `switch`. Compare ``kind`` against the static members of ``NetworkError/Kind``:
///
/// ```swift
/// do {
///     let user = try await client.send(GetUser(id: 42))
/// } catch let error as NetworkError where error.kind == .timedOut {
///     print("timed out while", error.phase)
/// }
/// ```
///
/// Every error carries the failing ``phase``, the ``request`` (method and URL with secrets
/// removed), the HTTP ``status`` when a response head arrived, the ``underlying`` error, the
/// transport's ``nativeCode`` when there is one, and ``shortDescription``: a bounded label that
/// is safe to use as a metric dimension.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, independent of which transport saw it.
    public var kind: Kind
    /// Where in the call it went wrong.
    public var phase: Phase
    /// A human-readable detail, for example the transport's own message. Never contains secrets
    /// that Courier knows about (credentials are redacted before they reach an error).
    public var message: String
    /// The method and URL of the failing request, with credentials and token-like query values removed.
    public var request: RequestSummary?
    /// The HTTP status code of the response, when one arrived.
    public var status: Int?
    /// The transport's own error code (a `CURLcode`, a `URLError` code, an errno), when there is one.
    public var nativeCode: NativeCode?
    /// The error that caused this one, when there is one.
    public var underlying: (any Error & Sendable)?
    /// The first bytes of the response body for ``Kind/httpStatus`` and ``Kind/decoding`` errors
    /// (at most ``NetworkError/maximumRetainedBodyBytes``).
    public var responseBody: Data?
    /// The decoded error body, when the API object declared an error-body type and it decoded.
    /// Read it with ``errorBody(as:)``.
    public var decodedErrorBody: (any Sendable)?
    /// The call's metrics up to the failure, when the call got as far as the client.
    public var metrics: RequestMetrics?
    /// The step of a ``CallSequence`` that failed, when the call was one.
    public var sequenceStep: CallSequenceStep?
    /// Whether the transport knows the server cannot have processed the request: the server
    /// refused its HTTP/2 stream with `REFUSED_STREAM` or left it above the last stream id of a
    /// `GOAWAY` (RFC 9113 §8.7), or a reused connection was found closed before any byte of the
    /// request was written. Such a request is safe to send again whatever its method (see
    /// ``neverReachedServer``). Transports set it where they can tell; `false` by default.
    public var requestNotProcessed = false

    /// How many bytes of a failed response body an error keeps.
    public static let maximumRetainedBodyBytes = 64 * 1024

    /// Creates an error. Adapters use this to report transport failures; Courier fills in
    /// ``request`` and ``metrics`` when the error passes back through the client.
    ///
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - phase: Where it went wrong.
    ///   - message: A human-readable detail (keep native messages here).
    ///   - status: The HTTP status, if a response head arrived.
    ///   - nativeCode: The transport's own code, if any.
    ///   - underlying: The causing error, if any.
    public init(
        kind: Kind,
        phase: Phase,
        message: String,
        status: Int? = nil,
        nativeCode: NativeCode? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.phase = phase
        self.message = message
        self.status = status
        self.nativeCode = nativeCode
        self.underlying = underlying
    }

    /// The decoded error body as the type the API object declared, or `nil`.
    ///
    /// - Parameter type: The error-body type declared with ``ErrorBodyDecoder/json(_:decoder:)``.
    /// - Returns: The decoded body, or `nil` when there is none or it has another type.
    public func errorBody<Body>(as type: Body.Type) -> Body? {
        decodedErrorBody as? Body
    }

    /// A bounded label for metrics and alerts: the kind, plus the phase for timeouts
    /// (for example `timed_out.connect`). It never contains a URL, a status or a message.
    public var shortDescription: String {
        kind == .timedOut ? "\(kind).\(phase)" : kind.description
    }

    /// One line: kind, phase, status, request and message.
    public var description: String {
        var text = "NetworkError.\(kind) (phase: \(phase))"
        if let status { text += " status \(status)" }
        if let request { text += " for \(request)" }
        if let sequenceStep { text += " in sequence step \(sequenceStep)" }
        if !message.isEmpty { text += ": \(message)" }
        if let nativeCode { text += " [\(nativeCode)]" }
        return text
    }
}

extension NetworkError {
    /// A transport's own error code, kept so that nothing is reported as "unknown".
    public struct NativeCode: Sendable, Hashable, CustomStringConvertible {
        /// Where the code comes from, for example `"curl"`, `"NSURLErrorDomain"` or `"errno"`.
        public var domain: String
        /// The code itself.
        public var code: Int

        /// Creates a native code.
        /// - Parameters:
        ///   - domain: Where the code comes from.
        ///   - code: The code.
        public init(domain: String, code: Int) {
            self.domain = domain
            self.code = code
        }

        /// `domain code`, for example `curl 28`.
        public var description: String { "\(domain) \(code)" }
    }

    /// The method and redacted URL of a request, for errors and logs.
    public struct RequestSummary: Sendable, Hashable, CustomStringConvertible {
        /// The HTTP method, for example `GET`.
        public var method: String
        /// The URL with credentials and token-like query values replaced by `REDACTED`.
        public var url: String

        /// Creates a summary; the URL is redacted here, so raw URLs may be passed.
        /// - Parameters:
        ///   - method: The HTTP method.
        ///   - url: The URL, redacted by this initializer.
        public init(method: String, url: String) {
            self.method = method
            self.url = Redaction.redactedURL(url)
        }

        /// `METHOD url`.
        public var description: String { "\(method) \(url)" }
    }
}

extension NetworkError {
    /// Whether the request surely never reached the server's application: the connection was
    /// refused or failed while it was being opened, or the transport knows the request was not
    /// processed (``requestNotProcessed``). Such an attempt is sent once more whatever its method
    /// (see ``Resilience/retriesUnsentRequests``). A DNS failure is not counted: the next attempt
    /// would fail the same way.
    public var neverReachedServer: Bool {
        (kind == .connectFailure && phase == .connect) || requestNotProcessed
    }
}
