import Courier
import Foundation
import HTTPTypes
import Logging

/// An endpoint read as a stream (events, JSON Lines, a download): the base endpoint with an
/// `Accept` (unless it sets its own), headers of the reading's own (`Last-Event-ID`, `Range`), and
/// its own body cap when it has one; never from the cache, never shared with an identical call,
/// and named in metrics and logs as the base.
struct StreamingEndpoint<Base: Endpoint>: Endpoint {
    typealias Output = Base.Output
    let base: Base
    /// The `Accept` value, unless the base sets one.
    var accept: String? = nil
    /// Headers set over the base's.
    var setting: [(String, String)] = []
    /// The body cap, when not the base's.
    var maxBytes: Int? = nil

    var baseURL: String? { base.baseURL }
    var path: String { base.path }
    var method: HTTPRequest.Method { base.method }
    var query: [QueryItem] { base.query }
    var headers: RequestHeaders {
        var headers = base.headers
        if let accept, headers["Accept"] == nil { headers.replace("Accept", accept) }
        for (name, value) in setting { headers.replace(name, value) }
        return headers
    }
    var body: RequestBody? { base.body }
    var team: String? { base.team }
    var logger: Logger? { base.logger }
    var timeout: Duration? { base.timeout }
    var httpVersion: HTTPVersionPreference? { base.httpVersion }
    var cachePolicy: CachePolicy? { .reloadIgnoringCache }
    var statusValidation: StatusValidation { base.statusValidation }
    var decoder: ResponseDecoder<Output> { base.decoder }
    var errorDecoder: ErrorBodyDecoder? { base.errorDecoder }
    var requestQueue: RequestQueue? { base.requestQueue }
    var priority: RequestPriority { base.priority }
    var tags: Set<String> { base.tags }
    var deduplication: Deduplication { .never }
    var endpointName: String? { base.endpointName ?? String(describing: Base.self) }
    var maxResponseBytes: Int? { maxBytes ?? base.maxResponseBytes }
}
