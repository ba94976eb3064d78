import Courier
import CourierTestServer
import Foundation
import Testing

/// The cases every transport must pass, against the loopback server. Each takes the transport
/// under test; the test target runs each for every transport (see `ConformanceTests`).
public enum ConformanceCases {
    /// GET sends the encoded query and headers, and decodes the JSON echo.
    public static func getWithQueryAndHeaders(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
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
            #expect(response.metrics.transport == transport.name)
            switch transport.phaseTimings {
            case .unavailable(let reason):
                #expect(response.metrics.phaseTimings == .unavailable(reason: reason))
            case .reported:
                guard case .available(let timings) = response.metrics.phaseTimings else {
                    Issue.record("\(transport.name) must report phase timings")
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

    /// POST JSON, form and raw bodies arrive intact.
    public static func postBodies(_ transport: ConformanceTransport, bodyKind: String) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
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

    /// multipart bodies stream file parts from disk.
    public static func multipart(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
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

    /// a missing multipart file fails as an invalid request before any I/O.
    public static func multipartMissingFile(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            var form = MultipartFormData()
            form.addFile("f", at: URL(fileURLWithPath: "/nonexistent/courier/file.bin"))
            await expectNetworkError(.invalidRequest) { try await client.send(EchoEndpoint(method: .post, body: .multipart(form))) }
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    /// non-2xx statuses fail with httpStatus and keep the body.
    public static func statusErrors(_ transport: ConformanceTransport, code: Int) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            let error = await expectNetworkError(.httpStatus) { try await client.send(RawEndpoint(path: "status/\(code)")) }
            #expect(error?.status == code)
            #expect(error?.responseBody == Data("{\"status\":\(code)}".utf8))
            await client.shutdown()
        }
    }

    /// invalid headers are rejected before any I/O.
    public static func invalidHeaders(_ transport: ConformanceTransport, header: (name: String, value: String)) async throws {
        let (name, value) = header
        try await withServer { server in
            let client = try transport.makeClient(server)
            var endpoint = EchoEndpoint()
            endpoint.headers = RequestHeaders([(name, value)])
            let error = await expectNetworkError(.invalidRequest) { try await client.send(endpoint) }
            #expect(error?.phase == .building)
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    /// cancelling mid-response reports cancelled promptly and closes the connection.
    public static func cancelMidResponse(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
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

    /// the call's deadline applies: a slow server times out while awaiting the response.
    public static func timeout(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "delay/5000", timeout: .milliseconds(300)))
            }
            #expect(error?.phase == .awaitingResponse)
            #expect(error?.shortDescription == "timed_out.awaiting_response")
            await client.shutdown()
        }
    }

    /// a slow body cannot stretch the deadline.
    public static func timeoutWhileReceiving(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "stream/100", query: [QueryItem("delayMs", "50")], timeout: .milliseconds(1500)))
            }
            #expect(error?.phase == .receiving)
            await client.shutdown()
        }
    }

    /// connection refused is a connect failure.
    public static func connectionRefused(_ transport: ConformanceTransport) async throws {
        let server = try await TestServer.start()
        let closedURL = server.baseURL
        await server.shutdown()
        let client = try transport.makeClient(baseURL: closedURL) { $0.requestTimeout = .seconds(10) }
        let error = await expectNetworkError(.connectFailure) { try await client.send(RawEndpoint(path: "echo")) }
        #expect(error?.phase == .connect)
        #expect(error?.nativeCode?.domain == transport.nativeErrorDomain)
        await client.shutdown()
    }

    /// DNS failure for a .invalid host.
    public static func dnsFailure(_ transport: ConformanceTransport) async throws {
        let client = try transport.makeClient(baseURL: "http://nonexistent.invalid") { $0.requestTimeout = .seconds(20) }
        let error = await expectNetworkError(.dnsFailure) { try await client.send(RawEndpoint(path: "x")) }
        #expect(error?.phase == .dns)
        await client.shutdown()
    }

    /// a response over the size limit fails with responseTooLarge.
    public static func tooLarge(_ transport: ConformanceTransport, route: (path: String, query: [QueryItem])) async throws {
        let (path, query) = route
        try await withServer { server in
            let client = try transport.makeClient(server) { $0.maxResponseBytes = 10_000 }
            await expectNetworkError(.responseTooLarge) { try await client.send(RawEndpoint(path: path, query: query)) }
            await client.shutdown()
        }
    }

    /// a 1 MiB body arrives whole.
    public static func largeDownload(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server)
            let data = try await client.send(RawEndpoint(path: "bytes/1048576"))
            #expect(data.count == 1_048_576)
            await client.shutdown()
        }
    }

    /// redirects are followed up to the limit.
    public static func redirects(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server) { $0.maxRedirects = 3 }
            let echo = try await client.send(EchoEndpoint(path: "redirect/3"))
            #expect(echo.path == "/echo")
            await expectNetworkError(.tooManyRedirects) { try await client.send(EchoEndpoint(path: "redirect/5")) }
            await client.shutdown()
        }
    }

    /// credentials never follow a redirect to another origin, but do to the same origin.
    public static func redirectCredentials(_ transport: ConformanceTransport) async throws {
        try await withServer { first in
            try await withServer { second in
                let client = try transport.makeClient(first) { $0.secretHeaderNames = ["x-internal-token"] }
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
