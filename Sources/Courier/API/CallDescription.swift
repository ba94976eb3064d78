import HTTPTypes
import Logging

/// Everything that describes one call, gathered from an API object or an ``Endpoint``.
/// The client turns it into a request in one place (``RequestBuilder``).
struct CallDescription<Output: Sendable>: Sendable {
    var baseURL: String?
    var path: String
    var method: HTTPRequest.Method
    var query: [QueryItem]
    var headers: RequestHeaders
    var body: RequestBody?
    var team: String?
    var timeout: Duration?
    var httpVersion: HTTPVersionPreference?
    var cachePolicy: CachePolicy?
    var statusValidation: StatusValidation
    var decoder: ResponseDecoder<Output>
    var errorDecoder: ErrorBodyDecoder?
    var logger: Logger?
    /// The endpoint or API object type, for the bounded metric label.
    var apiType: Any.Type
    /// The queue the call waits in; `nil` uses the client's default queue (if any).
    var requestQueue: RequestQueue?
    /// The call's priority in its queue.
    var priority: RequestPriority = .normal
    /// Tags for ``RequestQueue/cancelAll(_:)``.
    var tags: Set<String> = []
    /// Whether the call may share an identical call's transfer.
    var deduplication: Deduplication = .automatic
    /// The batch the call belongs to.
    var batch: BatchID?
    /// Told when the call leaves its queue (see ``QueuePlacement/onStart``).
    var onStart: (@Sendable () -> Void)?
    /// The endpoint's own name for metrics, logs and middleware; `nil` uses ``apiType``.
    var endpointName: String? = nil
}

extension CallDescription {
    /// The description of `endpoint`, built in one initialiser call (assigning the queue fields
    /// afterwards made Swift copy and destroy the whole generic struct on every call).
    /// The metric label names the dynamic type, so an API object sent as its base class is still
    /// labelled by its own class.
    init<E: Endpoint>(_ endpoint: E) where E.Output == Output {
        self.init(
            baseURL: endpoint.baseURL, path: endpoint.path, method: endpoint.method, query: endpoint.query,
            headers: endpoint.headers, body: endpoint.body, team: endpoint.team, timeout: endpoint.timeout,
            httpVersion: endpoint.httpVersion, cachePolicy: endpoint.cachePolicy,
            statusValidation: endpoint.statusValidation, decoder: endpoint.decoder, errorDecoder: endpoint.errorDecoder,
            logger: endpoint.logger, apiType: type(of: endpoint), requestQueue: endpoint.requestQueue, priority: endpoint.priority,
            tags: endpoint.tags, deduplication: endpoint.deduplication, batch: nil, onStart: nil,
            endpointName: endpoint.endpointName
        )
    }
}

/// Turns a call description into the request a transport sends: URL, validated headers, body.
enum RequestBuilder {
    static func build<Output>(
        _ call: CallDescription<Output>,
        configuration: ClientConfiguration,
        defaultFields: HTTPFields,
        configuredBase: ParsedBase?
    ) throws(NetworkError) -> (request: HTTPRequest, body: RequestBody?, ownHeaderNames: Set<HTTPField.Name>) {
        let base: URLBuilder.Base
        if let own = call.baseURL, own != configuration.baseURL {
            base = try URLBuilder.cachedBase(own)
        } else if let configuredBase {
            base = try configuredBase.result.get()
        } else {
            throw .invalidRequest("no base URL: the API object names none and the client configuration has none")
        }
        let url = try URLBuilder.build(base: base, path: call.path, query: call.query)
        let secrets = configuration.secretHeaderNames
        var fields = defaultFields
        let own = try call.headers.validatedFields(secretNames: secrets)
        let ownNames = own.isEmpty ? [] : Set(own.map(\.name))
        for name in ownNames {
            fields[values: name] = []
        }
        fields.append(contentsOf: own)
        if let body = call.body {
            if let error = body.buildError { throw error }
            if fields[.contentType] == nil, let contentType = body.contentType {
                fields.append(try HeaderValidation.field(name: "Content-Type", value: contentType))
            }
        }
        let request = HTTPRequest(
            method: call.method, scheme: url.scheme, authority: url.authority, path: url.pathAndQuery, headerFields: fields)
        return (request, call.body, ownNames)
    }
}

/// A client's base URL, parsed once (a bad one fails each call that uses it). A class, so that
/// handing it to every call costs one retain, not a copy of the whole result.
final class ParsedBase: Sendable {
    let result: Result<URLBuilder.Base, NetworkError>

    init(_ text: String) {
        result = Result { () throws(NetworkError) in try URLBuilder.parseBase(text) }
    }
}
