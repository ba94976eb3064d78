import HTTPTypes

/// A call's request as a transport sends it, built once by ``RequestBuilder``.
struct BuiltRequest: Sendable {
    var request: HTTPRequest
    var body: RequestBody?
    /// The names of the headers the endpoint set itself (they win over rules and defaults).
    var ownHeaderNames: Set<HTTPField.Name>
}

/// Turns an endpoint into the request a transport sends: URL, validated headers, body. The only
/// place a request is composed.
enum RequestBuilder {
    /// The request for `endpoint` on `client`, or why it cannot be built (a
    /// ``NetworkError/Kind/invalidRequest`` naming the call's method and URL as described).
    /// - Parameters:
    ///   - endpoint: The call's description.
    ///   - client: The client, for its base URL and default headers.
    ///   - limits: The call's context, whose per-call limits are checked here.
    ///   - timeout: The call's deadline from its start, checked here too (the endpoint's own, or
    ///     the configuration's, which is checked already).
    static func build(
        _ endpoint: some Endpoint, client: NetworkClient, limits: RequestContext, timeout: Duration? = nil
    ) -> Result<BuiltRequest, NetworkError> {
        do throws(NetworkError) {
            try checkLimits(of: limits, timeout: timeout)
            return .success(try compose(endpoint, client: client))
        } catch {
            var error = error
            if error.request == nil {
                let base = endpoint.baseURL ?? client.configuration.baseURL ?? ""
                error.request = NetworkError.RequestSummary(method: endpoint.method.rawValue, url: base + "/" + endpoint.path)
            }
            return .failure(error)
        }
    }

    /// The call's own limits, once its endpoint has set them, in the ranges the configuration's
    /// have (a value out of range is the caller's mistake: nothing is sent).
    private static func checkLimits(of context: RequestContext, timeout: Duration?) throws(NetworkError) {
        if let timeout, !ClientConfiguration.requestTimeoutRange.contains(timeout) {
            let range = ClientConfiguration.requestTimeoutRange
            throw .invalidRequest("the call's timeout is \(timeout); it must be \(range.lowerBound) to \(range.upperBound)")
        }
        guard ClientConfiguration.maxResponseBytesRange.contains(context.maxResponseBytes) else {
            throw .invalidRequest(
                "maxResponseBytes is \(context.maxResponseBytes); a call's limit must be 1 to \(ClientConfiguration.maxResponseBytesRange.upperBound)"
            )
        }
    }

    private static func compose(_ endpoint: some Endpoint, client: NetworkClient) throws(NetworkError) -> BuiltRequest {
        let base: URLBuilder.Base
        if let own = endpoint.baseURL, own != client.configuration.baseURL {
            base = try URLBuilder.cachedBase(own)
        } else if let configuredBase = client.configuredBase {
            base = try configuredBase.result.get()
        } else {
            throw .invalidRequest("no base URL: the API object names none and the client configuration has none")
        }
        let url = try URLBuilder.build(base: base, path: endpoint.path, query: endpoint.query)
        var fields = client.defaultFields
        let own = try endpoint.headers.validatedFields(secretNames: client.callTemplate.secretHeaderNames)
        let ownNames = own.isEmpty ? [] : Set(own.map(\.name))
        for name in ownNames {
            fields[values: name] = []
        }
        fields.append(contentsOf: own)
        let body = endpoint.body?.encodingJSON(with: client.jsonEncoder)
        if let body {
            if let error = body.buildError { throw error }
            if fields[.contentType] == nil, let contentType = body.contentType {
                fields.append(try HeaderValidation.field(name: "Content-Type", value: contentType))
            }
        }
        let request = HTTPRequest(
            method: endpoint.method, scheme: url.scheme, authority: url.authority, path: url.pathAndQuery, headerFields: fields)
        return BuiltRequest(request: request, body: body, ownHeaderNames: ownNames)
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
