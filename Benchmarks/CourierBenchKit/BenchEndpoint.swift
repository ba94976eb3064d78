import Courier
import Foundation
import HTTPTypes

/// The call every benchmark and probe request makes, described once as an ``Endpoint`` value (the
/// API object a service defines) and sent with `NetworkClient.response(for:)`.
struct BenchEndpoint: Endpoint {
    typealias Output = Data

    /// The full URL; the path is empty.
    var url: String
    var method: HTTPRequest.Method = .get
    var headers: RequestHeaders = [:]
    var body: RequestBody?
    var httpVersion: HTTPVersionPreference?
    /// `true` for the probe, which shows every status instead of failing on non-2xx.
    var acceptsAnyStatus = false
    var timeout: Duration?

    var baseURL: String? { url }
    var path: String { "" }
    var statusValidation: StatusValidation { acceptsAnyStatus ? .any : .successful }

}

extension BenchEndpoint {
    /// The endpoint that sends `request` to `url`.
    /// - Note: The caller validated the method name and headers (``RequestOptions``); an invalid one
    ///   is left out here rather than trapping.
    init(url: String, request: BenchRequest, httpVersion: HTTPVersionPreference?) {
        self.init(url: url)
        method = HTTPRequest.Method(request.method) ?? .get
        headers = RequestHeaders(request.headers.map { ($0.name, $0.value) })
        body = request.body.map { RequestBody.data(Data($0), contentType: request.contentType) }
        self.httpVersion = httpVersion
        timeout = .seconds(request.timeoutSeconds)
    }
}

extension HTTPChoice {
    /// The Courier preference for this choice.
    var preference: HTTPVersionPreference {
        switch self {
        case .http1: .http1_1
        case .http2: .http2
        case .h2c: .http2PriorKnowledge
        }
    }
}
