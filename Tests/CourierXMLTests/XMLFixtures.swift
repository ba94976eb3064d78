import Courier
import CourierMock
import CourierXML
import Foundation
import HTTPTypes

/// A client over a mock transport that answers every `GET /doc` with `body` and `contentType`.
func mockClient(body: String, contentType: String? = "application/xml", status: Int = 200) throws -> (NetworkClient, MockTransport) {
    try mockClient(bytes: Data(body.utf8), contentType: contentType, status: status)
}

/// A client over a mock transport that answers every `GET /doc` with `bytes`.
func mockClient(bytes: Data, contentType: String? = "application/xml", status: Int = 200) throws -> (NetworkClient, MockTransport) {
    let mock = MockTransport()
    var headers: RequestHeaders = [:]
    if let contentType { headers.add("Content-Type", contentType) }
    let responseHeaders = headers
    mock.stub(nil, "/doc") { _ in .status(status, headers: responseHeaders, body: bytes) }
    let client = try NetworkClient(configuration: ClientConfiguration(baseURL: "http://xml.test"), transport: mock)
    return (client, mock)
}

/// `GET /doc`, decoded by `decoder`; statuses as for SOAP (2xx, 400, 500) so that faults reach it.
struct GetDocument<Output: Sendable>: Endpoint {
    var decoder: ResponseDecoder<Output>
    var path: String { "doc" }
    var statusValidation: StatusValidation { .soap }
}

/// `GET /doc` with the automatic decoder.
struct GetAutomatic<Output: Decodable & Sendable>: Endpoint {
    var path: String { "doc" }
}

/// Runs `GET /doc` over a mock answering `body`, decoding with `decoder`.
func decode<Output: Sendable>(
    _ body: String, as decoder: ResponseDecoder<Output>, contentType: String? = "application/xml"
) async throws -> Output {
    let (client, _) = try mockClient(body: body, contentType: contentType)
    return try await client.send(GetDocument(decoder: decoder))
}

/// The error of `GET /doc` decoded by `decoder`, or `nil` if it succeeded.
func decodingError<Output: Sendable>(
    _ body: String, as decoder: ResponseDecoder<Output>, contentType: String? = "application/xml", status: Int = 200
) async throws -> NetworkError? {
    let (client, _) = try mockClient(body: body, contentType: contentType, status: status)
    do {
        _ = try await client.send(GetDocument(decoder: decoder))
        return nil
    } catch let error as NetworkError {
        return error
    }
}
