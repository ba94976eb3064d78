import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The cases every transport must pass, against the loopback server. Each takes the transport
/// under test; the test target runs each for every transport (see `ConformanceTests`).
public enum ConformanceCases {
    /// GET sends the encoded query and headers, and decodes the JSON echo.
    public static func getWithQueryAndHeaders(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
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
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            // The first chunk at once, the rest never (the gate stays shut): the response is
            // mid-body when the cancel comes, however slow the machine.
            let task = Task {
                try await client.send(
                    RawEndpoint(path: "stream/200", query: [QueryItem("delayMs", "20"), QueryItem("gate", "never")], timeout: .seconds(60)))
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

    /// the call's deadline applies: a slow server times out while awaiting the response. The
    /// deadline is on a manual clock, moved once the server holds the request, so the case does
    /// not depend on how busy the machine is.
    public static func timeout(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try transport.makeClient(server) { $0.timeSource = clock }
            let call = Task { try await client.send(RawEndpoint(path: "delay/60000", timeout: .seconds(30))) }
            #expect(await eventually { server.requestsInFlight == 1 }, "the request never reached the server")
            await clock.waitForAlarms(1)
            clock.advance(by: .seconds(30))
            let error = await expectNetworkError(.timedOut) { try await call.value }
            #expect(error?.phase == .awaitingResponse)
            #expect(error?.shortDescription == "timed_out.awaiting_response")
            await client.shutdown()
        }
    }

    /// a slow body cannot stretch the deadline: the deadline (on a manual clock, moved once the
    /// head has arrived) strikes while the body still streams.
    public static func timeoutWhileReceiving(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let heads = HeadArrivals()
            let client = try transport.makeClient(server, middleware: [heads]) { $0.timeSource = clock }
            let call = Task {
                try await client.send(RawEndpoint(path: "stream/600", query: [QueryItem("delayMs", "100")], timeout: .seconds(30)))
            }
            #expect(await eventually { heads.count == 1 }, "the head never arrived")
            await clock.waitForAlarms(1)
            clock.advance(by: .seconds(30))
            let error = await expectNetworkError(.timedOut) { try await call.value }
            #expect(error?.phase == .receiving)
            await client.shutdown()
        }
    }

    /// the deadline ends the work under the call, not only the call: a call to a host that never
    /// accepts the connection times out at its deadline, and `shutdown()` then returns promptly,
    /// because no connection attempt outlives the call.
    public static func deadlineThroughShutdown(_ transport: ConformanceTransport) async throws {
        let blackhole = try FullBacklogListener()
        defer { blackhole.close() }
        let clock = ManualTimeSource()
        let client = try transport.makeClient(baseURL: "http://127.0.0.1:\(blackhole.port)") {
            $0.timeSource = clock
            $0.connectTimeout = .seconds(60)
            $0.stallTimeout = .seconds(60)
            $0.requestTimeout = .seconds(30)
        }
        let call = Task { try await client.send(RawEndpoint(path: "x")) }
        await clock.waitForAlarms(1)
        clock.advance(by: .seconds(30))
        let error = await expectNetworkError(.timedOut) { try await call.value }
        #expect(error?.phase == .connect || error?.phase == .sending || error?.phase == .awaitingResponse, "\(String(describing: error))")
        let stopping = ContinuousClock.now
        await client.shutdown()
        let took = stopping.duration(to: .now)
        #expect(took < .seconds(3), "shutdown() took \(took) after the call's deadline")
    }

    /// connection refused is a connect failure.
    public static func connectionRefused(_ transport: ConformanceTransport) async throws {
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let client = try transport.makeClient(baseURL: refusing.baseURL) { $0.requestTimeout = .seconds(10) }
        let error = await expectNetworkError(.connectFailure) { try await client.send(RawEndpoint(path: "echo")) }
        #expect(error?.phase == .connect)
        #expect(error?.nativeCode?.domain == transport.nativeErrorDomain)
        #expect(error?.neverReachedServer == true)
        // The request never reached a server: it was sent once more (and refused again).
        #expect(error?.metrics?.attempts == 2)
        #expect(error?.metrics?.unsentRetries == 1)
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
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) { $0.maxResponseBytes = 10_000 }
            await expectNetworkError(.responseTooLarge) { try await client.send(RawEndpoint(path: path, query: query)) }
            await client.shutdown()
        }
    }

    /// a 1 MiB body arrives whole.
    public static func largeDownload(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let data = try await client.send(RawEndpoint(path: "bytes/1048576"))
            #expect(data.count == 1_048_576)
            await client.shutdown()
        }
    }
}

extension ConformanceCases {
    /// The methods every transport sends as given; a HEAD response has no body.
    public static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    /// Each method reaches the server as sent; bodies go with POST, PUT and PATCH; HEAD has no body.
    public static func method(_ transport: ConformanceTransport, method: HTTPRequest.Method) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            if method == .head {
                let response = try await client.response(for: RawEndpoint(path: "echo", method: .head))
                #expect(response.head.status.code == 200)
                #expect(response.value.isEmpty)
            } else {
                let carriesBody = [.post, .put, .patch].contains(method)
                let echo = try await client.send(EchoEndpoint(method: method, body: carriesBody ? .text("payload") : nil))
                #expect(echo.method == method.rawValue)
                #expect(echo.body == (carriesBody ? "payload" : ""))
            }
            await client.shutdown()
        }
    }

    /// 2xx statuses succeed; 204 and 304 carry no body.
    public static func successAndBodylessStatuses(_ transport: ConformanceTransport, code: Int) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let response = try await client.response(for: RawEndpoint(path: "status/\(code)", statusValidation: .any))
            #expect(response.head.status.code == code)
            if code == 204 || code == 304 {
                #expect(response.value.isEmpty)
            } else {
                #expect(response.value == Data("{\"status\":\(code)}".utf8))
            }
            await client.shutdown()
        }
    }

    /// Repeated response header names keep their order (or arrive joined, where the transport
    /// declares so); lookup ignores case; a large value arrives whole.
    public static func responseHeaders(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let big = String(repeating: "v", count: 8 * 1024)
            let response = try await client.response(
                for: RawEndpoint(
                    path: "headers", query: [QueryItem("X-Multi", "one"), QueryItem("X-Multi", "two"), QueryItem("X-Big", big)]))
            let multi = try #require(HTTPField.Name("x-MULTI"))
            switch transport.repeatedResponseHeaders {
            case .kept: #expect(response.head.headerFields[values: multi] == ["one", "two"])
            case .joined: #expect(response.head.headerFields[values: multi] == ["one, two"])
            }
            #expect(response.head.headerFields[try #require(HTTPField.Name("x-big"))] == big)
            let echo = try await client.send(EchoEndpoint(headers: ["X-Large": big, "X-Repeat": "a"]))
            #expect(echo.header("x-large") == big)
            await client.shutdown()
        }
    }

    /// Empty, one-byte and chunked bodies, both ways.
    public static func smallAndChunkedBodies(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            #expect(try await client.send(RawEndpoint(path: "bytes/0")).isEmpty)
            #expect(try await client.send(RawEndpoint(path: "bytes/1")).count == 1)
            #expect(try await client.send(RawEndpoint(path: "stream/10", query: [QueryItem("size", "100")])).count == 1000)
            let empty = try await client.send(EchoEndpoint(method: .post, body: .data(Data())))
            #expect(empty.bodyLength == 0)
            let one = try await client.send(EchoEndpoint(method: .post, body: .data(Data([0x41]))))
            #expect(one.body == "A")
            await client.shutdown()
        }
    }

    /// 200 calls at once all complete, once each, with their own results.
    public static func concurrentCalls(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let results = try await withThrowingTaskGroup(of: (Int, Echo).self) { group in
                for index in 0..<200 {
                    group.addTask { (index, try await client.send(EchoEndpoint(query: [QueryItem("id", "\(index)")]))) }
                }
                var results: [Int: Echo] = [:]
                for try await (index, echo) in group {
                    #expect(results[index] == nil, "call \(index) completed twice")
                    results[index] = echo
                }
                return results
            }
            #expect(results.count == 200)
            #expect(results.allSatisfy { index, echo in echo.query == [["id", "\(index)"]] })
            #expect(server.requestCount == 200)
            await client.shutdown()
        }
    }

    /// A call whose task is already cancelled never reaches the server; cancelling after
    /// completion changes nothing.
    public static func cancelBeforeAndAfter(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(RawEndpoint(path: "echo"))
            }
            await expectNetworkError(.cancelled) { try await early.value }
            #expect(server.requestCount == 0)
            let done = Task { try await client.send(RawEndpoint(path: "bytes/10")) }
            let data = try await done.value
            done.cancel()
            #expect(data.count == 10)
            #expect(try await done.value.count == 10)
            await client.shutdown()
        }
    }

    /// Cleartext HTTP/2 with prior knowledge: multiplexed where supported, otherwise refused as
    /// `unsupported` before any I/O.
    public static func cleartextHTTP2(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: .h2c) { server in
            // The call asks for h2c itself (a configuration asking for it is refused at start-up
            // by the transports that cannot: see TransportSettingsTests).
            let client = try transport.makeClient(baseURL: server.baseURL) { $0.requestTimeout = .seconds(20) }
            switch transport.cleartextHTTP2 {
            case .supported:
                for _ in 0..<3 { #expect(try await client.send(H2CEndpoint()).count == 10) }
                #expect(server.connectionsOpened == 1)
            case .unsupported:
                let error = await expectNetworkError(.unsupported) { try await client.send(H2CEndpoint()) }
                #expect(error?.phase == .building)
                #expect(server.requestCount == 0)
            }
            await client.shutdown()
        }
    }
}

/// A call that asks for cleartext HTTP/2 with prior knowledge.
struct H2CEndpoint: Endpoint {
    typealias Output = Data
    var path: String { "bytes/10" }
    var httpVersion: HTTPVersionPreference? { .http2PriorKnowledge }
}
