import Courier
import CourierMock
import Foundation
import Testing

@Suite("Mock transport")
struct MockTransportTests {
    struct Call: Endpoint {
        typealias Output = Data
        var method: HTTPRequest.Method = .get
        var path: String
        var query: [QueryItem] = []
        var headers: RequestHeaders = [:]
        var body: RequestBody?
        var timeout: Duration?
    }

    @Test(
        "stubs match by method and path pattern",
        arguments: [
            ("/users/:id", "users/42", true),
            ("/users/*", "users/42", true),
            ("/users/:id", "users/42/posts", false),
            ("/users/**", "users/42/posts", true),
            ("/users/**", "users", true),
            ("/users", "users/42", false),
            ("/a/b", "a/c", false),
            ("/a/b", "a/bb", false),
            ("/a/bb", "a/b", false),
            ("/", "", true),
            ("/a", "", false),
            ("/:id", "x", true),
            ("/a/:id/c", "a/7/c", true),
            ("/a/**", "a", true),
        ])
    func pathPatterns(pattern: String, path: String, matches: Bool) async throws {
        let mock = MockTransport()
        mock.stub(.get, pattern, .text("hit"))
        let client = try makeClient(mock)
        let result = try? await client.send(Call(path: path))
        #expect((result == Data("hit".utf8)) == matches)
    }

    @Test("method, query and header matchers narrow a stub")
    func matchers() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/search", query: ["q": "a b"], headers: ["X-Team": "blue"], .text("blue search"))
        mock.stub(nil, "/search", .text("any search"))
        let client = try makeClient(mock)
        let blue = try await client.send(Call(method: .post, path: "search", query: [QueryItem("q", "a b")], headers: ["X-Team": "blue"]))
        #expect(blue == Data("blue search".utf8))
        let other = try await client.send(Call(method: .post, path: "search", query: [QueryItem("q", "a b")], headers: ["X-Team": "red"]))
        #expect(other == Data("any search".utf8))
        let get = try await client.send(Call(path: "search", query: [QueryItem("q", "a b")], headers: ["X-Team": "blue"]))
        #expect(get == Data("any search".utf8))
    }

    @Test("responses come in sequence, the last one repeating")
    func sequences() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/seq", responses: [.text("one"), .text("two"), .text("last")])
        let client = try makeClient(mock)
        var answers: [String] = []
        for _ in 0..<5 { answers.append(String(decoding: try await client.send(Call(path: "seq")), as: UTF8.self)) }
        #expect(answers == ["one", "two", "last", "last", "last"])
    }

    static let injectedKinds: [NetworkError.Kind] = [
        .timedOut, .dnsFailure, .connectFailure, .connectionClosed, .tlsFailure, .invalidResponse, .tooManyRedirects, .transportFailure,
    ]

    @Test("any NetworkError kind can be injected", arguments: injectedKinds)
    func faults(kind: NetworkError.Kind) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/fault", .failure(NetworkError(kind: kind, phase: .connect, message: "injected")))
        let client = try makeClient(mock)
        do {
            _ = try await client.send(Call(path: "fault"))
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == kind)
            #expect(error.request?.url == "https://api.test/fault")
            #expect(error.metrics?.transport == "mock")
        }
    }

    @Test("strict mode names the unmatched request; lenient mode answers 404")
    func strictness() async throws {
        let strict = MockTransport()
        do {
            _ = try await makeClient(strict).send(Call(path: "nowhere", query: [QueryItem("x", "1")]))
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .noMatchingStub)
            #expect(error.message.contains("GET /nowhere"))
        }
        var configuration = MockTransport.Configuration()
        configuration.strict = false
        let lenient = MockTransport(configuration: configuration)
        do {
            _ = try await makeClient(lenient).send(Call(path: "nowhere"))
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .httpStatus)
            #expect(error.status == 404)
        }
    }

    @Test("delays wait on the call's clock and are interrupted by the deadline")
    func delays() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/slow", .text("late", delay: .seconds(30)))
        mock.stub(.get, "/soon", .text("on time", delay: .seconds(2)))
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock)

        let soon = Task { try await client.send(Call(path: "soon", timeout: .seconds(5))) }
        await clock.waitForAlarms(2)  // the deadline and the delay
        clock.advance(by: .seconds(2))
        #expect(String(decoding: try await soon.value, as: UTF8.self) == "on time")

        let slow = Task { try await client.send(Call(path: "slow", timeout: .seconds(5))) }
        await clock.waitForAlarms(2)
        clock.advance(by: .seconds(5))
        do {
            _ = try await slow.value
            Issue.record("must time out")
        } catch let error as NetworkError {
            #expect(error.kind == .timedOut)
            #expect(error.phase == .awaitingResponse)
        }
    }

    @Test("every request is recorded with its body")
    func recording() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/**", .status(201))
        let client = try makeClient(mock)
        _ = try await client.send(Call(method: .put, path: "items/1", body: .json(["a": 1])))
        _ = try await client.send(Call(method: .delete, path: "items/1"))
        let recorded = mock.recordedRequests
        #expect(recorded.map(\.head.method) == [.put, .delete])
        #expect(recorded.map(\.path) == ["/items/1", "/items/1"])
        #expect(recorded[0].body == Data(#"{"a":1}"#.utf8))
        #expect(recorded[0].head.headerFields[.contentType] == "application/json")
        #expect(recorded[1].body == nil)
        mock.reset()
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a path pattern ignores the query and repeated slashes", arguments: ["/users/7?expand=1", "/users//7", "/users/7/"])
    func patternIgnoresQueryAndSlashes(path: String) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .text("hit"))
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.test", path: path)
        request.headerFields = [:]
        let response = try await mock.send(
            request, body: nil,
            context: RequestContext(requestID: "r", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "mock")))
        #expect(response.head.status == .ok)
    }

    @Test("recording keeps the newest requests up to the limit", arguments: [0, 1, 3])
    func boundedRecording(limit: Int) async throws {
        var configuration = MockTransport.Configuration()
        configuration.maxRecordedRequests = limit
        let mock = MockTransport(configuration: configuration)
        mock.stub(nil, "/**", .status(200))
        let client = try makeClient(mock)
        for index in 0..<10 { _ = try await client.send(Call(path: "items/\(index)")) }
        #expect(mock.recordedRequests.map(\.path) == (0..<10).suffix(limit).map { "/items/\($0)" })
    }

    @Test("after shutdown, calls fail")
    func shutdown() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/**", .status(200))
        let client = try makeClient(mock)
        await client.shutdown()
        await #expect(throws: NetworkError.self) { try await client.send(Call(path: "x")) }
    }
}
