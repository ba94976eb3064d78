import Courier
import CourierMock
import CourierStreaming
import Foundation
import HTTPTypes
import Testing

/// The client-wide JSON coders (``ClientConfiguration/json``): one configuration line makes an
/// API's dates and keys decode through every entry point, and an endpoint's own coder still wins.
@Suite("Client-wide JSON")
struct JSONCodingTests {
    struct Order: Codable, Sendable, Equatable {
        var orderNumber: Int
        var placedAt: Date
    }

    static let placed = Date(timeIntervalSince1970: 1_765_000_000)

    static func client(_ json: JSONCoding, stub: (MockTransport) -> Void) throws -> (NetworkClient, MockTransport) {
        let mock = MockTransport()
        stub(mock)
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.json = json
        return (try NetworkClient(configuration: configuration, transport: mock), mock)
    }

    static func answer(_ text: String) -> MockResponse {
        .status(200, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    @Test(
        "an ISO 8601 date decodes through client.get with one configuration line, with or without a fraction or an offset",
        arguments: [
            ("2025-12-06T05:46:40Z", 0.0), ("2025-12-06T05:46:40.250Z", 0.25), ("2025-12-06T06:46:40+01:00", 0.0),
        ])
    func iso8601(text: String, fraction: Double) async throws {
        let (client, _) = try Self.client(JSONCoding(dates: .iso8601)) {
            $0.stub(.get, "/orders/1", Self.answer(#"{"orderNumber": 1, "placedAt": "\#(text)"}"#))
        }
        let order = try await client.get("orders/1", as: Order.self)
        #expect(order == Order(orderNumber: 1, placedAt: Self.placed.addingTimeInterval(fraction)))
    }

    @Test("without the line the same answer fails as decoding, naming the type")
    func plainDecoderRefusesISODates() async throws {
        let (client, _) = try Self.client(JSONCoding()) {
            $0.stub(.get, "/orders/1", Self.answer(#"{"orderNumber": 1, "placedAt": "2025-12-06T05:46:40Z"}"#))
        }
        let error = try await #require(throws: NetworkError.self) { try await client.get("orders/1", as: Order.self) }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("Order"))
    }

    @Test("snake-case keys: a one-off POST's body is written with them and its answer read with them")
    func snakeCaseBothWays() async throws {
        let (client, mock) = try Self.client(JSONCoding(dates: .seconds, keys: .snakeCase)) {
            $0.stub(.post, "/orders", Self.answer(#"{"order_number": 2, "placed_at": 1765000000}"#))
        }
        let order = try await client.post("orders", json: Order(orderNumber: 2, placedAt: Self.placed), as: Order.self)
        #expect(order == Order(orderNumber: 2, placedAt: Self.placed))
        let sent = try #require(mock.recordedRequests.first?.body)
        let object = try #require(try JSONSerialization.jsonObject(with: sent) as? [String: Any])
        #expect(Set(object.keys) == ["order_number", "placed_at"])
        #expect(object["placed_at"] as? Int == 1_765_000_000)
        #expect(mock.recordedRequests.first?.head.headerFields[.contentType] == "application/json")
    }

    struct OwnCoders: Endpoint {
        typealias Output = Order
        var path: String { "orders/3" }
        var method: HTTPRequest.Method { .put }
        var body: RequestBody? {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .millisecondsSince1970
            return .json(Order(orderNumber: 3, placedAt: JSONCodingTests.placed), encoder: encoder)
        }
        var decoder: ResponseDecoder<Order> {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            return .json(decoder)
        }
    }

    @Test("an endpoint's own encoder and decoder win over the client's")
    func endpointCodersWin() async throws {
        let (client, mock) = try Self.client(JSONCoding(dates: .iso8601, keys: .snakeCase)) {
            $0.stub(.put, "/orders/3", Self.answer(#"{"orderNumber": 3, "placedAt": 1765000000000}"#))
        }
        #expect(try await client.send(OwnCoders()) == Order(orderNumber: 3, placedAt: Self.placed))
        let sent = try #require(mock.recordedRequests.first?.body)
        #expect(String(decoding: sent, as: UTF8.self).contains(#""placedAt":1765000000000"#))
    }

    struct Problem: Decodable, Sendable {
        var errorCode: String
    }

    struct Refused: Endpoint {
        typealias Output = Data
        var path: String { "orders/4" }
        var errorDecoder: ErrorBodyDecoder? { .json(Problem.self) }
    }

    @Test("an error body decodes with the client's decoder")
    func errorBodyUsesClientDecoder() async throws {
        let (client, _) = try Self.client(JSONCoding(keys: .snakeCase)) {
            $0.stub(
                .get, "/orders/4", .status(409, headers: ["Content-Type": "application/json"], body: Data(#"{"error_code": "stale"}"#.utf8))
            )
        }
        let error = try await #require(throws: NetworkError.self) { try await client.send(Refused()) }
        #expect(error.errorBody(as: Problem.self)?.errorCode == "stale")
    }

    struct Feed: Endpoint {
        typealias Output = Data
        var path: String { "feed" }
    }

    @Test("an event's data and JSON Lines decode with the client's decoder")
    func streamsUseClientDecoder() async throws {
        let (client, _) = try Self.client(JSONCoding(dates: .iso8601, keys: .snakeCase)) {
            $0.stub(
                .get, "/feed",
                .status(
                    200, headers: ["Content-Type": "application/jsonl"],
                    body: Data(#"{"order_number": 5, "placed_at": "2025-12-06T05:46:40Z"}"#.utf8 + [0x0A])))
        }
        let events = client.events(Feed())
        let decoded = try events.decode(ServerSentEvent(data: #"{"order_number": 6, "placed_at": "2025-12-06T05:46:40Z"}"#), as: Order.self)
        #expect(decoded == Order(orderNumber: 6, placedAt: Self.placed))
        let failure = #expect(throws: NetworkError.self) { try events.decode(ServerSentEvent(type: "price", data: "{"), as: Order.self) }
        #expect(failure?.kind == .decoding)
        var lines: [Order] = []
        for try await order in client.jsonLines(Feed(), as: Order.self) { lines.append(order) }
        #expect(lines == [Order(orderNumber: 5, placedAt: Self.placed)])
    }

    /// A middleware that makes its own JSON body, as a signing or batching middleware would.
    struct Rewrap: Middleware {
        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            try await next(request, .json(Order(orderNumber: 9, placedAt: JSONCodingTests.placed)), context)
        }
    }

    @Test(
        "a JSON body a middleware makes is written by the client's encoder, as application or network middleware",
        arguments: [true, false])
    func middlewareBodiesUseClientEncoder(asNetworkMiddleware: Bool) async throws {
        let mock = MockTransport()
        mock.stub(.post, "/orders", .status(204))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.json = JSONCoding(dates: .iso8601, keys: .snakeCase)
        let client = try NetworkClient(
            configuration: configuration, transport: mock, middleware: asNetworkMiddleware ? [] : [Rewrap()],
            networkMiddleware: asNetworkMiddleware ? [Rewrap()] : [])
        _ = try await client.send(.post, "orders", body: .data(Data("x".utf8)), as: EmptyResponse.self)
        let sent = try #require(mock.recordedRequests.first?.body)
        let object = try #require(try JSONSerialization.jsonObject(with: sent) as? [String: Any])
        #expect(object["order_number"] as? Int == 9)
        #expect(object["placed_at"] as? String == "2025-12-06T05:46:40Z")
    }

    /// A model that is not `Sendable`: its body is written at once by the encoder given.
    final class Legacy: Encodable {
        var name = "old"
    }

    @Test("a value that is not Sendable is written at once by the encoder it is given")
    func nonSendableWithEncoder() throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let body = RequestBody.json(Legacy(), encoder: encoder)
        #expect(body.bufferedData == Data(#"{"name":"old"}"#.utf8))
        #expect(body.contentType == "application/json")
    }

    @Test("json.dates and json.keys from a file and the environment; a wrong word names the key and the words")
    func configurationKeys() throws {
        let file = try ClientConfiguration().applyingJSON(
            Data(#"{"json": {"dates": "ISO8601", "keys": "snake-case"}}"#.utf8), source: "test")
        #expect(file.json == JSONCoding(dates: .iso8601, keys: .snakeCase))
        let environment = try ClientConfiguration.load(environment: ["COURIER_JSON_DATES": "milliseconds"])
        #expect(environment.json == JSONCoding(dates: .milliseconds))
        let error = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_JSON_KEYS": "kebab"])
        }
        #expect(error?.key == "json.keys")
        #expect(error?.allowed == "as-is, snake-case")
    }

    @Test("a plain configuration shows no json line; a set one shows its formats")
    func description() {
        #expect(!ClientConfiguration().description.contains("json"))
        var configuration = ClientConfiguration()
        configuration.json.dates = .iso8601
        #expect(configuration.description.contains("json: dates iso8601, keys as-is"))
    }
}
