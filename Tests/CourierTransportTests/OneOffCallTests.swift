import Courier
import CourierMock
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The one-off calls: every method by its path, with headers, a body, and a deadline of the call's own.
@Suite("One-off calls: every method, with headers, body and timeout")
struct OneOffCallTests {
    struct Item: Codable, Equatable, Sendable {
        var name: String
    }

    static func client() throws -> (NetworkClient, MockTransport, ManualTimeSource) {
        let mock = MockTransport()
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://api.test")
        configuration.timeSource = clock
        return (try NetworkClient(configuration: configuration, transport: mock), mock, clock)
    }

    @Test("get, post, put, patch, delete and head send their method, path, query, headers and body")
    func everyMethod() async throws {
        let (client, mock, _) = try Self.client()
        mock.stub(nil, "/items/1") { request in
            request.head.method == .head ? .status(200, headers: ["X-Size": "3"]) : .json(Item(name: request.head.method.rawValue))
        }
        let headers: RequestHeaders = ["X-Tenant-Id": "acme"]
        #expect(try await client.get("items/1", query: [QueryItem("v", "2")], headers: headers, as: Item.self) == Item(name: "GET"))
        #expect(try await client.post("items/1", json: Item(name: "a"), as: Item.self) == Item(name: "POST"))
        #expect(try await client.put("items/1", json: Item(name: "b"), as: Item.self) == Item(name: "PUT"))
        #expect(try await client.patch("items/1", json: Item(name: "c"), as: Item.self) == Item(name: "PATCH"))
        #expect(try await client.delete("items/1", as: Item.self) == Item(name: "DELETE"))
        try await client.delete("items/1")
        let head = try await client.head("items/1")
        #expect(head.status == .ok && head.headerFields[HTTPField.Name("X-Size")!] == "3")
        let form = try await client.send(.post, "items/1", body: .form([("name", "d")]), as: Item.self)
        #expect(form == Item(name: "POST"))

        let sent = mock.recordedRequests
        #expect(sent.map(\.head.method) == [.get, .post, .put, .patch, .delete, .delete, .head, .post])
        #expect(sent[0].head.path == "/items/1?v=2" && sent[0].head.headerFields[HTTPField.Name("X-Tenant-Id")!] == "acme")
        for (index, name) in [(1, "a"), (2, "b"), (3, "c")] {
            #expect(sent[index].body.flatMap { try? JSONDecoder().decode(Item.self, from: $0) } == Item(name: name))
            #expect(sent[index].head.headerFields[.contentType] == "application/json")
        }
        #expect(sent[7].body == Data("name=d".utf8))
        await client.shutdown()
    }

    @Test("a call's own timeout ends it at that deadline, not the client's; one that is not positive is refused before anything is sent")
    func ownTimeout() async throws {
        let (client, mock, clock) = try Self.client()
        mock.stub(.get, "/slow", responses: [.status(200, delay: .seconds(30))])
        let call = Task { () -> NetworkError? in
            do {
                _ = try await client.get("slow", timeout: .seconds(5), as: Data.self)
                return nil
            } catch {
                return error as? NetworkError
            }
        }
        #expect(await eventually { clock.pendingAlarms >= 2 }, "the call's alarm and the mock's delay")
        clock.advance(by: .seconds(5))
        let error = await call.value
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        #expect(error?.message.contains("5") == true, "\(String(describing: error))")
        for bad in [Duration.zero, .seconds(-1)] {
            await #expect(throws: NetworkError.self) { _ = try await client.get("slow", timeout: bad, as: Data.self) }
            do {
                _ = try await client.get("slow", timeout: bad, as: Data.self)
            } catch let error as NetworkError {
                #expect(error.kind == .invalidRequest && error.message.contains("timeout"), "\(error)")
            }
        }
        #expect(mock.recordedRequests.count == 1, "a refused timeout sends nothing")
        await client.shutdown()
    }
}
