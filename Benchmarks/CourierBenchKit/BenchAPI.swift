import Courier
import Foundation
import HTTPTypes

/// The API object every benchmark request goes through, as a service would describe a call.
final class BenchAPI: BaseAPI<Data>, @unchecked Sendable {
    /// What every call of one run shares.
    struct Shape: Sendable {
        var url: String
        var post: Bool
        var httpVersion: HTTPVersionPreference
        var headers: RequestHeaders = [:]
        var method: HTTPRequest.Method?
        var body: RequestBody?
        var acceptsAnyStatus = false
        var timeout: Duration?
    }

    private let shape: Shape

    init(client: NetworkClient, shape: Shape) {
        self.shape = shape
        super.init(client: client)
    }

    override var baseURL: String? { shape.url }
    override var method: HTTPRequest.Method { shape.method ?? (shape.post ? .post : .get) }
    override var headers: RequestHeaders { shape.headers }
    override var body: RequestBody? { shape.body ?? (shape.post ? Self.postBody : nil) }
    override var httpVersion: HTTPVersionPreference? { shape.httpVersion }
    override var statusValidation: StatusValidation { shape.acceptsAnyStatus ? .any : .successful }
    override var timeout: Duration? { shape.timeout }

    /// The `post` scenario's 1 KiB JSON body, built once.
    static let postBody = RequestBody.data(Data(Scenario.postBody), contentType: "application/json")
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

/// The same call as a value (``Endpoint``).
struct BenchEndpoint: Endpoint {
    typealias Output = Data
    let shape: BenchAPI.Shape
    var baseURL: String? { shape.url }
    var path: String { "" }
    var method: HTTPRequest.Method { shape.method ?? (shape.post ? .post : .get) }
    var headers: RequestHeaders { shape.headers }
    var body: RequestBody? { shape.body ?? (shape.post ? BenchAPI.postBody : nil) }
    var httpVersion: HTTPVersionPreference? { shape.httpVersion }
    var statusValidation: StatusValidation { shape.acceptsAnyStatus ? .any : .successful }
    var timeout: Duration? { shape.timeout }
}
