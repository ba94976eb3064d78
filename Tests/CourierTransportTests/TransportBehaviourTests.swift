import Courier
import CourierCurl
import CourierTestServer
import CourierURLSession
import Foundation
import Synchronization
import Testing

/// The echo as a decoded output.
typealias Echo = EchoResponse

struct EchoEndpoint: Endpoint {
    typealias Output = Echo
    var path = "echo"
    var method: HTTPRequest.Method = .get
    var query: [QueryItem] = []
    var headers: RequestHeaders = [:]
    var body: RequestBody?
    var timeout: Duration?
}

struct RawEndpoint: Endpoint {
    typealias Output = Data
    var path: String
    var query: [QueryItem] = []
    var timeout: Duration?
}

/// The transports every behaviour test runs on.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlsession
    case curl

    var testDescription: String { rawValue }

    func makeTransport() throws -> any Transport {
        switch self {
        case .urlsession: URLSessionTransport()
        case .curl: try CurlTransport()
        }
    }
}

func makeClient(
    _ kind: TransportKind, baseURL: String, configure: (inout ClientConfiguration) -> Void = { _ in }
) throws -> NetworkClient {
    var configuration = ClientConfiguration(baseURL: baseURL, transport: kind.rawValue)
    configure(&configuration)
    return try NetworkClient(configuration: configuration, transport: kind.makeTransport())
}

func makeClient(
    _ kind: TransportKind, _ server: TestServer, configure: (inout ClientConfiguration) -> Void = { _ in }
) throws -> NetworkClient {
    try makeClient(kind, baseURL: server.baseURL, configure: configure)
}

@discardableResult
func expectNetworkError<T>(_ kind: NetworkError.Kind, _ body: () async throws -> T) async -> NetworkError? {
    do {
        _ = try await body()
        Issue.record("expected NetworkError.\(kind), got a result")
        return nil
    } catch let error as NetworkError {
        #expect(error.kind == kind, "\(error)")
        return error
    } catch {
        Issue.record("expected NetworkError, got \(error)")
        return nil
    }
}

@Suite("Every transport against the loopback server", .timeLimit(.minutes(2)))
struct TransportBehaviourTests {
    @Test("GET sends the encoded query and headers, and decodes the JSON echo", arguments: TransportKind.allCases)
    func getWithQueryAndHeaders(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let endpoint = EchoEndpoint(
                path: "echo/a b/é", query: [QueryItem("q", "x&y=z"), QueryItem("plus", "1+1")],
                headers: ["X-Team": "payments", "Accept": "application/json"]
            )
            let response = try await client.response(for: endpoint)
            #expect(response.head.status.code == 200)
            #expect(response.value.method == "GET")
            #expect(response.value.path == "/echo/a%20b/%C3%A9")
            #expect(response.value.rawQuery == "q=x%26y%3Dz&plus=1%2B1")
            #expect(response.value.query == [["q", "x&y=z"], ["plus", "1+1"]])
            #expect(response.value.header("x-team") == "payments")
            #expect(response.metrics.transport == kind.rawValue)
            switch kind {
            case .urlsession:
                #expect(response.metrics.phaseTimings == .unavailable(reason: "URLSession on Linux does not report task metrics"))
            case .curl:
                guard case .available(let timings) = response.metrics.phaseTimings else {
                    Issue.record("curl must report phase timings")
                    return
                }
                #expect(timings.firstByte != nil)
                #expect(timings.total != nil)
            }
            #expect((response.metrics.network ?? .zero) > .zero)
            #expect(response.metrics.bytesReceived > 0)
            await client.shutdown()
        }
    }

    @Test("POST JSON, form and raw bodies arrive intact", arguments: TransportKind.allCases, ["json", "form", "text"])
    func postBodies(kind: TransportKind, bodyKind: String) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let (body, expected, contentType): (RequestBody, String, String) =
                switch bodyKind {
                case "json": (.json(["name": "Ada"]), #"{"name":"Ada"}"#, "application/json")
                case "form":
                    (.form([("name", "Ada Lovelace"), ("x", "1&2")]), "name=Ada+Lovelace&x=1%262", "application/x-www-form-urlencoded")
                default: (.text("héllo"), "héllo", "text/plain; charset=utf-8")
                }
            let echo = try await client.send(EchoEndpoint(method: .post, body: body))
            #expect(echo.method == "POST")
            #expect(echo.body == expected)
            #expect(echo.header("content-type") == contentType)
            await client.shutdown()
        }
    }

    @Test("multipart bodies stream file parts from disk", arguments: TransportKind.allCases)
    func multipart(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString).bin")
            let fileBytes = Data(repeating: UInt8(ascii: "f"), count: 300_000)
            try fileBytes.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var form = MultipartFormData(boundary: "test-boundary")
            form.addField("title", "Report \"Q3\"")
            form.addFile("attachment", at: file, filename: "report.bin")
            let body = RequestBody.multipart(form)
            #expect(body.bufferedData == nil, "file parts must not be loaded into memory")
            let echo = try await client.send(EchoEndpoint(method: .post, body: body))
            #expect(echo.bodyLength == Int(body.length ?? -1))
            #expect(echo.header("content-type") == "multipart/form-data; boundary=test-boundary")
            #expect(
                echo.body.hasPrefix("--test-boundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nReport %22Q3%22\r\n") == false
            )
            #expect(echo.body.hasPrefix("--test-boundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nReport \"Q3\"\r\n"))
            #expect(
                echo.body.contains("name=\"attachment\"; filename=\"report.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nffff"))
            #expect(echo.body.hasSuffix("\r\n--test-boundary--\r\n"))
            await client.shutdown()
        }
    }

    @Test("a missing multipart file fails as an invalid request before any I/O", arguments: TransportKind.allCases)
    func multipartMissingFile(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            var form = MultipartFormData()
            form.addFile("f", at: URL(fileURLWithPath: "/nonexistent/courier/file.bin"))
            await expectNetworkError(.invalidRequest) { try await client.send(EchoEndpoint(method: .post, body: .multipart(form))) }
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    @Test("non-2xx statuses fail with httpStatus and keep the body", arguments: TransportKind.allCases, [400, 404, 422, 500, 503])
    func statusErrors(kind: TransportKind, code: Int) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let error = await expectNetworkError(.httpStatus) { try await client.send(RawEndpoint(path: "status/\(code)")) }
            #expect(error?.status == code)
            #expect(error?.responseBody == Data("{\"status\":\(code)}".utf8))
            await client.shutdown()
        }
    }

    @Test(
        "invalid headers are rejected before any I/O",
        arguments: TransportKind.allCases, [("X-Bad", "a\r\nInjected: 1"), ("X-Nul", "a\u{0}b"), ("Bad Name", "v"), ("X-Lf", "a\nb")])
    func invalidHeaders(kind: TransportKind, header: (name: String, value: String)) async throws {
        let (name, value) = header
        try await withServer { server in
            let client = try makeClient(kind, server)
            var endpoint = EchoEndpoint()
            endpoint.headers = RequestHeaders([(name, value)])
            let error = await expectNetworkError(.invalidRequest) { try await client.send(endpoint) }
            #expect(error?.phase == .building)
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    @Test("cancelling mid-response reports cancelled promptly and closes the connection", arguments: TransportKind.allCases)
    func cancelMidResponse(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let task = Task {
                try await client.send(RawEndpoint(path: "stream/200", query: [QueryItem("delayMs", "20")], timeout: .seconds(60)))
            }
            #expect(await eventually { server.requestCount == 1 })
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()
            let error = await expectNetworkError(.cancelled) { try await task.value }
            #expect(error != nil)
            #expect(await eventually { server.connectionsOpen == 0 }, "the server still sees \(server.connectionsOpen) open connection(s)")
            await client.shutdown()
        }
    }

    @Test("the call's deadline applies: a slow server times out while awaiting the response", arguments: TransportKind.allCases)
    func timeout(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "delay/5000", timeout: .milliseconds(300)))
            }
            #expect(error?.phase == .awaitingResponse)
            #expect(error?.shortDescription == "timed_out.awaiting_response")
            await client.shutdown()
        }
    }

    @Test("a slow body cannot stretch the deadline", arguments: TransportKind.allCases)
    func timeoutWhileReceiving(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "stream/100", query: [QueryItem("delayMs", "50")], timeout: .milliseconds(1500)))
            }
            #expect(error?.phase == .receiving)
            await client.shutdown()
        }
    }

    @Test("connection refused is a connect failure", arguments: TransportKind.allCases)
    func connectionRefused(kind: TransportKind) async throws {
        let server = try await TestServer.start()
        let closedURL = server.baseURL
        await server.shutdown()
        let client = try makeClient(kind, baseURL: closedURL) { $0.requestTimeout = .seconds(10) }
        let error = await expectNetworkError(.connectFailure) { try await client.send(RawEndpoint(path: "echo")) }
        #expect(error?.phase == .connect)
        #expect(error?.nativeCode?.domain == (kind == .curl ? "CURLcode" : NSURLErrorDomain))
        await client.shutdown()
    }

    @Test("DNS failure for a .invalid host", arguments: TransportKind.allCases)
    func dnsFailure(kind: TransportKind) async throws {
        let client = try makeClient(kind, baseURL: "http://nonexistent.invalid") { $0.requestTimeout = .seconds(20) }
        let error = await expectNetworkError(.dnsFailure) { try await client.send(RawEndpoint(path: "x")) }
        #expect(error?.phase == .dns)
        await client.shutdown()
    }

    @Test(
        "a response over the size limit fails with responseTooLarge",
        arguments: TransportKind.allCases, [("bytes/100000", []), ("stream/50", [QueryItem("size", "1000")])])
    func tooLarge(kind: TransportKind, route: (path: String, query: [QueryItem])) async throws {
        let (path, query) = route
        try await withServer { server in
            let client = try makeClient(kind, server) { $0.maxResponseBytes = 10_000 }
            await expectNetworkError(.responseTooLarge) { try await client.send(RawEndpoint(path: path, query: query)) }
            await client.shutdown()
        }
    }

    @Test("a 1 MiB body arrives whole", arguments: TransportKind.allCases)
    func largeDownload(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server)
            let data = try await client.send(RawEndpoint(path: "bytes/1048576"))
            #expect(data.count == 1_048_576)
            await client.shutdown()
        }
    }

    @Test("redirects are followed up to the limit", arguments: TransportKind.allCases)
    func redirects(kind: TransportKind) async throws {
        try await withServer { server in
            let client = try makeClient(kind, server) { $0.maxRedirects = 3 }
            let echo = try await client.send(EchoEndpoint(path: "redirect/3"))
            #expect(echo.path == "/echo")
            await expectNetworkError(.tooManyRedirects) { try await client.send(EchoEndpoint(path: "redirect/5")) }
            await client.shutdown()
        }
    }

    @Test("credentials never follow a redirect to another origin, but do to the same origin", arguments: TransportKind.allCases)
    func redirectCredentials(kind: TransportKind) async throws {
        try await withServer { first in
            try await withServer { second in
                let client = try makeClient(kind, first) { $0.secretHeaderNames = ["x-internal-token"] }
                let headers: RequestHeaders = [
                    "Authorization": "Bearer s3cret", "Cookie": "session=abc", "X-Internal-Token": "t0k", "X-Plain": "kept",
                ]
                let crossOrigin = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", "\(second.baseURL)/echo")], headers: headers)
                let elsewhere = try await client.send(crossOrigin)
                #expect(second.requestCount == 1)
                #expect(elsewhere.header("authorization") == nil)
                #expect(elsewhere.header("cookie") == nil)
                #expect(elsewhere.header("x-internal-token") == nil)
                #expect(elsewhere.header("x-plain") == "kept")

                let sameOrigin = EchoEndpoint(path: "redirect-to", query: [QueryItem("url", "/echo")], headers: headers)
                let here = try await client.send(sameOrigin)
                #expect(here.header("authorization") == "Bearer s3cret")
                await client.shutdown()
            }
        }
    }
}
