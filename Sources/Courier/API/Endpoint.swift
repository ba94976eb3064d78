import HTTPTypes
import Logging

/// A remote call described as a value, for code that prefers structs to ``BaseAPI`` subclasses.
///
/// Only ``path`` is required; every other property has a default. Run it with
/// ``NetworkClient/send(_:)``:
///
/// ```swift
/// struct GetUser: Endpoint {
///     typealias Output = User          // any Decodable: decoded as JSON
///     let id: Int
///     var path: String { "users/\(id)" }
/// }
/// let user = try await client.send(GetUser(id: 42))
/// ```
public protocol Endpoint: Sendable {
    /// What a successful call returns.
    associatedtype Output: Sendable

    /// The base URL; `nil` (the default) uses the client's.
    var baseURL: String? { get }
    /// The path below the base URL, as plain text: `/` separates segments, everything else is
    /// percent-encoded (existing `%XX` escapes are kept).
    var path: String { get }
    /// The method; `GET` by default.
    var method: HTTPRequest.Method { get }
    /// Query items, as plain text; none by default.
    var query: [QueryItem] { get }
    /// Headers; they win over the client's default headers of the same name.
    var headers: RequestHeaders { get }
    /// The body; none by default.
    var body: RequestBody? { get }
    /// The team that owns the call, for team middleware and metrics; none by default.
    var team: String? { get }
    /// The logger for this call; `nil` (the default) uses the client's.
    var logger: Logger? { get }
    /// The call's deadline; the client's `requestTimeout` by default.
    var timeout: Duration? { get }
    /// The HTTP version this call asks for; `nil` (the default) leaves it to the transport's configuration.
    var httpVersion: HTTPVersionPreference? { get }
    /// How this call uses the client's `ResponseCache`; `nil` (the default) uses the client's
    /// ``ClientConfiguration/cachePolicy``.
    var cachePolicy: CachePolicy? { get }
    /// Which statuses succeed; 2xx by default.
    var statusValidation: StatusValidation { get }
    /// How the body becomes ``Output``; ``ResponseDecoder/automatic`` by default.
    var decoder: ResponseDecoder<Output> { get }
    /// How a rejected response's body is decoded into the error; none by default.
    var errorDecoder: ErrorBodyDecoder? { get }
    /// The queue the call waits in; `nil` (the default) uses the client's default queue, if it has one.
    var requestQueue: RequestQueue? { get }
    /// The call's priority in its queue; `normal` by default.
    var priority: RequestPriority { get }
    /// Tags for ``RequestQueue/cancelAll(_:)``; none by default.
    var tags: Set<String> { get }
    /// Whether the call may share an identical call's transfer in its queue; `automatic` by default.
    var deduplication: Deduplication { get }
    /// The name metrics labels, logs and middleware use for this call (an OpenAPI `operationID`,
    /// say); `nil` (the default) labels metrics by the endpoint's type name.
    var endpointName: String? { get }
    /// The largest response body this call accepts, in bytes (1 to 16 GiB: see
    /// ``ClientConfiguration/maxResponseBytesRange``), for one call that returns more or less than
    /// the others; `nil` (the default) uses the client's ``ClientConfiguration/maxResponseBytes``.
    var maxResponseBytes: Int? { get }
    /// Where the call reports its bytes sent and received (see ``ProgressReporter``); `nil` (the
    /// default) counts nothing. A reporter belongs to one call.
    var progress: ProgressReporter? { get }
}

extension Endpoint {
    /// No base URL of its own: the client's is used.
    public var baseURL: String? { nil }
    /// `GET`.
    public var method: HTTPRequest.Method { .get }
    /// No query items.
    public var query: [QueryItem] { [] }
    /// No headers.
    public var headers: RequestHeaders { [:] }
    /// No body.
    public var body: RequestBody? { nil }
    /// No team.
    public var team: String? { nil }
    /// The client's logger.
    public var logger: Logger? { nil }
    /// The client's timeout.
    public var timeout: Duration? { nil }
    /// The transport's configured HTTP version.
    public var httpVersion: HTTPVersionPreference? { nil }
    /// The client's cache policy.
    public var cachePolicy: CachePolicy? { nil }
    /// 2xx.
    public var statusValidation: StatusValidation { .successful }
    /// Chosen from `Output` at run time.
    public var decoder: ResponseDecoder<Output> { .automatic }
    /// None.
    public var errorDecoder: ErrorBodyDecoder? { nil }
    /// The client's default queue.
    public var requestQueue: RequestQueue? { nil }
    /// `normal`.
    public var priority: RequestPriority { .normal }
    /// No tags.
    public var tags: Set<String> { [] }
    /// `automatic`.
    public var deduplication: Deduplication { .automatic }
    /// None: metrics are labelled by the type's name.
    public var endpointName: String? { nil }
    /// The client's limit.
    public var maxResponseBytes: Int? { nil }
    /// None: the call counts no progress.
    public var progress: ProgressReporter? { nil }
}
