/// Which HTTP version a call asks the transport to use.
///
/// Set it per client (each transport's `Configuration`) or per call (``Endpoint/httpVersion`` and
/// ``BaseAPI/httpVersion``; the call's choice wins). A transport that cannot honour the choice fails
/// the call with ``NetworkError/Kind/unsupported`` before any I/O rather than quietly using another
/// version.
///
/// ```swift
/// struct Feed: Endpoint {
///     typealias Output = Data
///     var path: String { "feed" }
///     var httpVersion: HTTPVersionPreference? { .http2PriorKnowledge }   // h2c to a known server
/// }
/// ```
public struct HTTPVersionPreference: Sendable, Hashable, CustomStringConvertible {
    /// The versions, closed to this module: a transport compares a preference with the named
    /// values (`version == .http2`), so one added later breaks no transport's `switch`.
    package enum Code: Sendable, Hashable {
        case http1_1
        case http2
        case http2PriorKnowledge
    }

    package let code: Code

    /// HTTP/1.1 only, on `http` and `https` alike.
    public static let http1_1 = HTTPVersionPreference(code: .http1_1)
    /// HTTP/2 where the server agrees through TLS ALPN, HTTP/1.1 otherwise (and on cleartext `http`).
    public static let http2 = HTTPVersionPreference(code: .http2)
    /// HTTP/2 from the first byte, without negotiation ("prior knowledge"): for cleartext `http`
    /// servers known to speak HTTP/2 (h2c). Over `https` it behaves like ``http2``.
    public static let http2PriorKnowledge = HTTPVersionPreference(code: .http2PriorKnowledge)

    /// `1.1`, `2` or `2-prior-knowledge`.
    public var description: String {
        switch code {
        case .http1_1: "1.1"
        case .http2: "2"
        case .http2PriorKnowledge: "2-prior-knowledge"
        }
    }
}
