import Courier
import Foundation

/// What the example's calls decode: the server's echo of the request.
struct EchoSummary: Codable, Sendable, CustomStringConvertible {
    var method: String
    var path: String
    var rawQuery: String
    var bodyLength: Int

    var description: String {
        "\(method) \(path)\(rawQuery.isEmpty ? "" : "?" + rawQuery) (\(bodyLength) body bytes echoed)"
    }
}

/// Searches: GET with a query, run with a completion handler.
final class SearchAPI: BaseAPI<EchoSummary>, @unchecked Sendable {
    let term: String

    init(client: NetworkClient, term: String) {
        self.term = term
        super.init(client: client)
    }

    override var path: String { "echo/search" }
    override var query: [QueryItem] { [QueryItem("q", term), QueryItem("limit", "10")] }
    override var team: String? { "discovery" }
}

/// Creates an order: POST with a JSON body, run with async/await.
final class CreateOrderAPI: BaseAPI<EchoSummary>, @unchecked Sendable {
    struct Order: Encodable, Sendable {
        var sku: String
        var quantity: Int
    }

    let order: Order

    init(client: NetworkClient, order: Order) {
        self.order = order
        super.init(client: client)
    }

    override var method: HTTPRequest.Method { .post }
    override var path: String { "echo/orders" }
    override var headers: RequestHeaders { ["Idempotency-Key": "order-\(order.sku)-\(order.quantity)"] }
    override var body: RequestBody? { .json(order) }
}

/// A value-type endpoint whose server answers 404 with a JSON problem body.
struct MissingItem: Endpoint {
    struct Problem: Decodable, Sendable {
        var error: String
    }

    typealias Output = EchoSummary
    var path: String { "status/404" }
    var query: [QueryItem] { [QueryItem("body", #"{"error":"no such item"}"#)] }
    var errorDecoder: ErrorBodyDecoder? { .json(Problem.self) }
}

/// A service that is down: every call answers 503 (retried by the client's retry policy).
struct AlwaysUnavailable: Endpoint {
    typealias Output = Data
    var path: String { "status/503" }
}
