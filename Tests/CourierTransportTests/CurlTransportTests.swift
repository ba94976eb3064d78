import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCurl

func curlClient(
    baseURL: String, transport: CurlTransport.Configuration = .init(), configure: (inout ClientConfiguration) -> Void = { _ in }
) throws -> (NetworkClient, CurlTransport) {
    var configuration = ClientConfiguration(baseURL: baseURL, transport: "curl")
    configure(&configuration)
    let curl = try CurlTransport(configuration: transport)
    return (try NetworkClient(configuration: configuration, transport: curl), curl)
}

func curlClient(
    _ server: TestServer, transport: CurlTransport.Configuration = .init(), configure: (inout ClientConfiguration) -> Void = { _ in }
) throws -> (NetworkClient, CurlTransport) {
    try curlClient(baseURL: server.baseURL, transport: transport, configure: configure)
}

/// Trusts the test CA, in memory or from a file.
func trustingTestCA(_ configuration: CurlTransport.Configuration = .init()) -> CurlTransport.Configuration {
    var configuration = configuration
    configuration.tls.caPEM = TestCertificates.caPEM
    return configuration
}

@Suite("CurlTransport: protocols, TLS, streaming, timeouts, cancellation", .timeLimit(.minutes(3)))
struct CurlTransportTests {
    @Test("HTTP/1.1 reuses one connection for sequential calls, and metrics say so")
    func http1Reuse() async throws {
        try await withServer { server in
            let (client, _) = try curlClient(server)
            let first = try await client.response(for: RawEndpoint(path: "bytes/100"))
            let second = try await client.response(for: RawEndpoint(path: "bytes/100"))
            #expect(server.connectionsOpened == 1)
            #expect(first.metrics.reusedConnection == false)
            #expect(second.metrics.reusedConnection == true)
            #expect(first.metrics.httpVersion == "1.1")
            #expect(first.metrics.remoteAddress == "127.0.0.1:\(server.port)")
            await client.shutdown()
        }
    }

    @Test("HTTP/2 over TLS: ALPN picks h2, many concurrent calls share one connection, phases are ordered")
    func http2OverTLS() async throws {
        try await withServer(mode: .tls) { server in
            let (client, _) = try curlClient(server, transport: trustingTestCA())
            let results = try await withThrowingTaskGroup(of: DecodedResponse<Echo>.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.response(for: EchoEndpoint(query: [QueryItem("i", "\(index)")])) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 20)
            #expect(Set(results.map { $0.value.query.first?[1] ?? "" }).count == 20)
            #expect(results.allSatisfy { $0.metrics.httpVersion == "2" })
            #expect(server.connectionsOpened == 1, "HTTP/2 must multiplex: \(server.connectionsOpened) connections")
            let fresh = try #require(results.first { $0.metrics.reusedConnection == false })
            guard case .available(let timings) = fresh.metrics.phaseTimings else {
                Issue.record("curl must report phase timings")
                return
            }
            let dns = try #require(timings.dns)
            let connect = try #require(timings.connect)
            let tls = try #require(timings.tls)
            let firstByte = try #require(timings.firstByte)
            let total = try #require(timings.total)
            #expect(dns <= connect && connect <= tls && tls <= firstByte && firstByte <= total)
            await client.shutdown()
        }
    }

    @Test("HTTP/1.1 can be forced over TLS, per client and per call")
    func http1OverTLS() async throws {
        try await withServer(mode: .tls) { server in
            var settings = trustingTestCA()
            settings.httpVersion = .http1_1
            let (client, _) = try curlClient(server, transport: settings)
            let response = try await client.response(for: RawEndpoint(path: "bytes/10"))
            #expect(response.metrics.httpVersion == "1.1")
            await client.shutdown()

            let (h2Client, _) = try curlClient(server, transport: trustingTestCA())
            struct Forced: Endpoint {
                typealias Output = Data
                var path: String { "bytes/10" }
                var httpVersion: HTTPVersionPreference? { .http1_1 }
            }
            #expect(try await h2Client.response(for: Forced()).metrics.httpVersion == "1.1")
            await h2Client.shutdown()
        }
    }

    @Test("TLS is verified: an unknown CA fails, a wrong pin fails, the right pin and the CA file pass")
    func tlsVerification() async throws {
        try await withServer(mode: .tls) { server in
            let (untrusting, _) = try curlClient(server)
            let error = await expectNetworkError(.tlsFailure) { try await untrusting.send(RawEndpoint(path: "bytes/1")) }
            #expect(error?.phase == .tls)
            #expect(error?.nativeCode?.domain == "CURLcode")
            await untrusting.shutdown()

            var wrongPin = trustingTestCA()
            wrongPin.tls.pinnedPublicKey = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
            let (pinnedWrong, _) = try curlClient(server, transport: wrongPin)
            await expectNetworkError(.tlsFailure) { try await pinnedWrong.send(RawEndpoint(path: "bytes/1")) }
            await pinnedWrong.shutdown()

            let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ca-\(UUID().uuidString).pem")
            try Data(TestCertificates.caPEM.utf8).write(to: caFile)
            defer { try? FileManager.default.removeItem(at: caFile) }
            var pinned = CurlTransport.Configuration()
            pinned.tls.caFile = caFile.path
            pinned.tls.pinnedPublicKey = TestCertificates.serverPublicKeyPin
            let (pinnedRight, _) = try curlClient(server, transport: pinned)
            #expect(try await pinnedRight.send(RawEndpoint(path: "bytes/3")).count == 3)
            await pinnedRight.shutdown()

            var insecure = CurlTransport.Configuration()
            insecure.tls.dangerouslyDisableCertificateVerification()
            let (unverified, _) = try curlClient(server, transport: insecure)
            #expect(try await unverified.send(RawEndpoint(path: "bytes/2")).count == 2)
            await unverified.shutdown()
        }
    }

    @Test("cleartext HTTP/2 (prior knowledge): multiplexed where libcurl supports it, a clear unsupported error where it does not")
    func cleartextHTTP2() async throws {
        try await withServer(mode: .h2c) { server in
            var settings = CurlTransport.Configuration()
            settings.httpVersion = .http2PriorKnowledge
            let (client, _) = try curlClient(server, transport: settings)
            if CurlTransport.supportsCleartextHTTP2 {
                // One call first: h2c transfers do not wait to multiplex (PIPEWAIT; see
                // CurlRequestSetup), so parallel first calls may open connections side by side.
                // Once one is open, every call shares it.
                #expect(try await client.response(for: RawEndpoint(path: "bytes/100")).metrics.httpVersion == "2")
                let versions = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<10 { group.addTask { try await client.response(for: RawEndpoint(path: "bytes/100")).metrics.httpVersion } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(versions == Array(repeating: "2", count: 10))
                #expect(server.connectionsOpened == 1)
            } else {
                // libcurl before 8.0 (Debian 12 ships 7.88.1) breaks reused h2c connections (curl issue 10634).
                let error = await expectNetworkError(.unsupported) { try await client.send(RawEndpoint(path: "bytes/100")) }
                #expect(error?.phase == .building)
                #expect(error?.message.contains("curl issue 10634") == true)
                #expect(error?.message.contains(CurlTransport.libcurlVersion) == true)
                #expect(server.requestCount == 0)
            }
            await client.shutdown()
        }
    }

    /// Handles keep their options from transfer to transfer (no `curl_easy_reset`); each
    /// transfer sets every option a transfer may set. One handle in the pool and calls one after
    /// another, so every call runs on the handle of the call before, each shape after another.
    @Test("a reused easy handle carries nothing of its previous transfer: method, body, headers")
    func reusedHandle() async throws {
        try await withServer { server in
            var settings = CurlTransport.Configuration()
            settings.handlePoolSize = 1
            let transport = try CurlTransport(configuration: settings)
            func call(_ method: HTTPRequest.Method, body: String? = nil, header: String? = nil) async throws -> (Int, Data) {
                var request = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/echo")
                if let header { request.headerFields[HTTPField.Name("X-Only-Once")!] = header }
                let context = RequestContext(
                    requestID: "reuse", deadline: .now + .seconds(30), recorder: TransferRecorder(transport: "curl"))
                let response = try await transport.send(request, body: body.map { .text($0) }, context: context)
                return (response.head.status.code, try await response.body.collect(upTo: 1 << 20))
            }
            func echo(_ method: HTTPRequest.Method, body: String? = nil, header: String? = nil) async throws -> Echo {
                let (status, data) = try await call(method, body: body, header: header)
                #expect(status == 200)
                return try JSONDecoder().decode(Echo.self, from: data)
            }
            let put = try await echo(.put, body: "abc", header: "1")
            #expect(put.method == "PUT" && put.bodyLength == 3 && put.header("X-Only-Once") == "1")
            let get = try await echo(.get)
            #expect(get.method == "GET" && get.bodyLength == 0)
            #expect(get.header("X-Only-Once") == nil && get.header("Content-Length") == nil && get.header("Transfer-Encoding") == nil)
            let (headStatus, headBody) = try await call(.head)
            #expect(headStatus == 200 && headBody.isEmpty)
            #expect(try await echo(.get).method == "GET", "NOBODY must not outlive the HEAD")
            #expect(try await echo(.delete).method == "DELETE")
            let getWithBody = try await echo(.get, body: "xy")
            #expect(getWithBody.method == "GET" && getWithBody.bodyLength == 2)
            let post = try await echo(.post, body: "four")
            #expect(post.method == "POST" && post.bodyLength == 4)
            let last = try await echo(.get)
            #expect(last.method == "GET" && last.bodyLength == 0 && last.header("Content-Type") == nil)
            #expect(server.connectionsOpened == 1, "the calls share one connection")
            #expect(transport.statistics.handlesMade == 1, "every call ran on the first call's handle")
            await transport.shutdown()
        }
    }

    @Test("a 64 MiB upload streams from a file part and arrives whole")
    func streamingUpload() async throws {
        try await withServer { server in
            let (client, _) = try curlClient(server) { $0.requestTimeout = .seconds(60) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString).bin")
            let size = 64 << 20
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: UInt64(size))  // sparse: no 64 MiB buffer in the test either
            try handle.close()
            defer { try? FileManager.default.removeItem(at: file) }
            var form = MultipartFormData(boundary: "b")
            form.addFile("blob", at: file, filename: "blob.bin")
            let body = RequestBody.multipart(form)
            #expect(body.bufferedData == nil)
            // Memory is not asserted here: resident size is process-wide and other suites run in
            // parallel. The body is never materialised (`bufferedData == nil`); the reader hands
            // libcurl one chunk at a time from the file.
            let echo = try await client.send(EchoEndpoint(method: .put, body: body))
            #expect(echo.method == "PUT")
            #expect(echo.bodyLength == Int(body.length ?? 0))
            await client.shutdown()
        }
    }

    /// Also with the reader on the transport's own thread (``CurlTransport/executor``), where the
    /// consumer's reads and the producer's pauses and resumes share one thread.
    @Test(
        "a slow reader pauses the transfer (backpressure) and the body still arrives whole",
        arguments: [false, true])
    func backpressure(onTransportThread: Bool) async throws {
        try await withServer { server in
            var settings = CurlTransport.Configuration()
            settings.responseBufferBytes = 64 * 1024
            let transport = try CurlTransport(configuration: settings)
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/bytes/8388608")
            let received = try await withTaskExecutorPreference(onTransportThread ? transport.executor : nil) {
                let context = RequestContext(
                    requestID: "backpressure", deadline: .now + .seconds(60), recorder: TransferRecorder(transport: "curl"))
                let response = try await transport.send(request, body: nil, context: context)
                var received = 0
                var chunks = 0
                for try await chunk in response.body {
                    received += chunk.count
                    chunks += 1
                    if chunks % 16 == 0 { try await Task.sleep(for: .milliseconds(2)) }
                }
                return received
            }
            #expect(received == 8 << 20)
            let statistics = transport.statistics
            #expect(statistics.pauses > 0, "the reader was slow, so the transfer must have paused")
            #expect(statistics.resumes > 0)
            await transport.shutdown()
        }
    }

    @Test("dropping a streamed body stops the transfer and closes the connection")
    func droppedBody() async throws {
        try await withServer { server in
            let transport = try CurlTransport()
            let request = HTTPRequest(
                method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/stream/1000?delayMs=10")
            let context = RequestContext(requestID: "drop", deadline: .now + .seconds(60), recorder: TransferRecorder(transport: "curl"))
            do {
                let response = try await transport.send(request, body: nil, context: context)
                var iterator = response.body.makeAsyncIterator()
                _ = try await iterator.next()
            }
            #expect(await eventually { server.connectionsOpen == 0 }, "the connection must close once the body is dropped")
            await transport.shutdown()
        }
    }

    @Test("a stalled transfer fails as timed out, long before the deadline")
    func stall() async throws {
        try await withServer { server in
            var settings = CurlTransport.Configuration()
            settings.stallTimeout = .seconds(1)
            settings.stallMinimumBytesPerSecond = 1000
            let (client, _) = try curlClient(server, transport: settings) { $0.requestTimeout = .seconds(60) }
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "stream/100", query: [QueryItem("size", "10"), QueryItem("delayMs", "200")]))
            }
            #expect(error?.phase == .receiving)
            #expect(error?.nativeCode == .init(domain: "CURLcode", code: 28))
            await client.shutdown()
        }
    }

    @Test("a connect that hangs fails after the connect timeout, in the connect phase")
    func connectTimeout() async throws {
        let blackhole = try FullBacklogListener()
        defer { blackhole.close() }
        let (client, _) = try curlClient(baseURL: "http://127.0.0.1:\(blackhole.port)") {
            $0.connectTimeout = .milliseconds(300)
            $0.requestTimeout = .seconds(30)
        }
        let error = await expectNetworkError(.timedOut) { try await client.send(RawEndpoint(path: "x")) }
        #expect(error?.phase == .connect)
        await client.shutdown()
    }

    @Test("shutdown fails calls in flight and refuses new ones")
    func shutdownInFlight() async throws {
        try await withServer { server in
            let transport = try CurlTransport()
            let client = try NetworkClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, transport: "curl"), transport: transport)
            let task = Task { try await client.send(RawEndpoint(path: "delay/10000")) }
            #expect(await eventually { server.requestCount == 1 })
            await transport.shutdown()
            await expectNetworkError(.cancelled) { try await task.value }
            await expectNetworkError(.cancelled) { try await client.send(RawEndpoint(path: "bytes/1")) }
            await transport.shutdown()  // twice is fine
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }

    @Test("every transfer is released once its call ends: succeeded, failed, timed out, cancelled, or stopped by shutdown")
    func transfersReleased() async throws {
        try await withServer { server in
            let clock = ManualTimeSource()
            let (client, curl) = try curlClient(server) { $0.timeSource = clock }
            for _ in 0..<10 { _ = try await client.response(for: RawEndpoint(path: "bytes/100")) }
            await expectNetworkError(.httpStatus) { try await client.send(RawEndpoint(path: "status/404")) }
            // The deadline's handler holds its transfer strongly; the call's end drops it.
            let slow = Task { try await client.send(RawEndpoint(path: "delay/60000", timeout: .seconds(30))) }
            #expect(await eventually { server.requestsInFlight == 1 })
            await clock.waitForAlarms(1)
            clock.advance(by: .seconds(30))
            await expectNetworkError(.timedOut) { try await slow.value }
            let cancelled = Task { try await client.send(RawEndpoint(path: "delay/60000")) }
            #expect(await eventually { server.requestsInFlight == 1 })
            cancelled.cancel()
            await expectNetworkError(.cancelled) { try await cancelled.value }
            let inFlight = Task { try await client.send(RawEndpoint(path: "delay/60000")) }
            #expect(await eventually { server.requestsInFlight == 1 })
            await client.shutdown()
            await curl.shutdown()
            await expectNetworkError(.cancelled) { try await inFlight.value }
            #expect(curl.liveTransfers == 0)
        }
    }

    @Test("configuration values out of range are refused with the key named")
    func configurationValidation() {
        var settings = CurlTransport.Configuration()
        settings.maxConnectionsPerHost = 0
        #expect(throws: ConfigurationError.self) { try CurlTransport(configuration: settings) }
        do {
            _ = try CurlTransport(configuration: settings)
        } catch {
            #expect(error.key == "curl.maxConnectionsPerHost")
        }
    }
}
