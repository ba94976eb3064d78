import Courier
import CourierMock
import Foundation
import HTTPTypes
import Testing

@Suite("Decoding and status validation")
struct DecodingTests {
    struct Get<Output: Sendable>: Endpoint {
        var path = "thing"
        var decoder: ResponseDecoder<Output> = .automatic
        var statusValidation: StatusValidation = .successful
    }

    func client(answer: MockResponse) throws -> (NetworkClient, MockTransport) {
        let mock = MockTransport()
        mock.stub(nil, "/thing", answer)
        return (try makeClient(mock), mock)
    }

    @Test("Decodable outputs decode as JSON by default")
    func json() async throws {
        let (client, _) = try client(answer: .json(User(id: 1, name: "Ada")))
        #expect(try await client.send(Get<User>()) == User(id: 1, name: "Ada"))
    }

    @Test("a configured JSONDecoder is used")
    func customJSONDecoder() async throws {
        struct Snake: Decodable, Sendable { var userName: String }
        let (client, _) = try client(answer: .text(#"{"user_name":"Ada"}"#))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try await client.send(Get<Snake>(decoder: .json(decoder))).userName == "Ada")
    }

    @Test("a call made on the main actor is built, sent and decoded off it")
    @MainActor
    func decodesOffTheCallersActor() async throws {
        let (client, _) = try client(answer: .text("{}"))
        // The main actor's jobs run on the main queue, which carries this mark.
        let mark = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: mark, value: true)
        defer { DispatchQueue.main.setSpecific(key: mark, value: nil) }
        #expect(DispatchQueue.getSpecific(key: mark) == true)
        // The decoder runs last and synchronously, so it shows where the call's own work ran.
        let onMain = try await client.send(Get<Bool>(decoder: ResponseDecoder { _, _ in DispatchQueue.getSpecific(key: mark) == true }))
        #expect(onMain == false)
    }

    @Test("Data, String and EmptyResponse outputs")
    func rawOutputs() async throws {
        let (client, _) = try client(answer: .text("héllo"))
        #expect(try await client.send(Get<Data>()) == Data("héllo".utf8))
        #expect(try await client.send(Get<String>()) == "héllo")
        #expect(try await client.send(Get<String>(decoder: .string)) == "héllo")
        #expect(try await client.send(Get<EmptyResponse>()) == EmptyResponse())
    }

    @Test("an empty 204 body decodes as EmptyResponse")
    func noContent() async throws {
        let (client, _) = try client(answer: .status(204))
        #expect(try await client.send(Get<EmptyResponse>(decoder: .empty)) == EmptyResponse())
    }

    @Test(
        "decoding failures are typed and keep the body",
        arguments: [
            (MockResponse.text("not json"), "User"),
            (MockResponse.text(#"{"id":"one","name":"x"}"#), "User"),
            (MockResponse.status(200), "User"),
            (MockResponse.status(200, body: Data([0xFF, 0xFE])), "String"),
        ]
    )
    func decodingFailures(answer: MockResponse, type: String) async throws {
        let (client, _) = try client(answer: answer)
        do {
            if type == "User" { _ = try await client.send(Get<User>()) } else { _ = try await client.send(Get<String>()) }
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .decoding)
            #expect(error.phase == .decoding)
            #expect(error.status == 200)
            #expect(error.responseBody != nil)
            #expect(error.metrics?.decode != nil)
        }
    }

    @Test("without CourierXML linked, an XML response says which product decodes it; JSON is unaffected")
    func xmlWithoutProduct() throws {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "text/xml; charset=utf-8"
        #expect {
            try ResponseDecoder<User>.decodeAutomatically(Data("<user/>".utf8), head, json: JSONDecoder(), xml: nil)
        } throws: { error in
            "\(error)".contains("the response is XML (text/xml; charset=utf-8); link the CourierXML product")
        }
        head.headerFields[.contentType] = "application/vnd.api+json"
        let user = try ResponseDecoder<User>.decodeAutomatically(Data(#"{"id":1,"name":"Ada"}"#.utf8), head, json: JSONDecoder(), xml: nil)
        #expect(user == User(id: 1, name: "Ada"))
    }

    @Test("a decoder that throws a NetworkError fails the call with that error, its status and body attached")
    func decoderChoosesError() async throws {
        let (client, _) = try client(answer: .status(500, body: Data("no".utf8)))
        let decoder = ResponseDecoder<String> { _, _ in
            throw NetworkError(kind: .soapFault, phase: .validating, message: "refused")
        }
        let error = try await #require(throws: NetworkError.self) {
            try await client.send(Get<String>(decoder: decoder, statusValidation: .any))
        }
        #expect(error.kind == .soapFault)
        #expect(error.phase == .validating)
        #expect(error.status == 500)
        #expect(error.responseBody == Data("no".utf8))
        #expect(error.metrics?.decode != nil)
    }

    @Test("a non-Decodable output without a decoder fails clearly")
    func notDecodable() async throws {
        struct Opaque: Sendable {}
        let (client, _) = try client(answer: .text("x"))
        do {
            _ = try await client.send(Get<Opaque>())
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .decoding)
            #expect(error.message.contains("not Decodable"))
        }
    }

    @Test("status validation is configurable per API", arguments: [200, 201, 299, 300, 304, 404, 500])
    func statusValidation(code: Int) async throws {
        let (client, _) = try client(answer: .status(code, body: Data("x".utf8)))
        let defaultResult = try? await client.send(Get<Data>())
        #expect((defaultResult != nil) == (200..<300).contains(code))
        let anyResult = try? await client.send(Get<Data>(statusValidation: .any))
        #expect(anyResult != nil)
        let onlyNotFound = try? await client.send(Get<Data>(statusValidation: .codes([404])))
        #expect((onlyNotFound != nil) == (code == 404))
    }

    @Test("decode time is measured apart from network time")
    func decodeTiming() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/thing", .json(User(id: 1, name: "Ada"), delay: .milliseconds(30)))
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock)
        // Decoding "takes" 20 ms of the client's clock.
        let slowDecoder = ResponseDecoder<User> { data, _ in
            clock.advance(by: .milliseconds(20))
            return try JSONDecoder().decode(User.self, from: data)
        }
        let call = Task { try await client.response(for: Get<User>(decoder: slowDecoder)) }
        await clock.waitForAlarms(2)  // the deadline and the mock's 30 ms
        clock.advance(by: .milliseconds(30))
        let metrics = try await call.value.metrics
        #expect(metrics.network == .milliseconds(30))
        #expect(metrics.decode == .milliseconds(20))
        #expect(metrics.total == .milliseconds(50))
    }
}
