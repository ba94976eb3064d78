import Courier
import CourierMock
import Foundation
import Testing

@Suite("Request building and redaction")
struct RequestBuildingTests {
    struct Call: Endpoint {
        typealias Output = Data
        var baseURL: String?
        var path = "x"
        var query: [QueryItem] = []
        var headers: RequestHeaders = [:]
        var body: RequestBody?
    }

    @Test("the API object's headers win over the client's defaults; repeated names stay in order")
    func headerPrecedence() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/**", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.defaultHeaders = ["X-Team": "platform", "X-Default": "d", "Accept": "text/plain"]
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(headers: ["X-Team": "payments", "Accept": "application/json", "Accept": "text/html"]))
        let fields = try #require(mock.recordedRequests.first?.head.headerFields)
        #expect(fields[values: HTTPField.Name("X-Team")!] == ["payments"])
        #expect(fields[values: .accept] == ["application/json", "text/html"])
        #expect(fields[values: HTTPField.Name("X-Default")!] == ["d"])
    }

    @Test("an API's base URL overrides the client's; without either the call is invalid")
    func baseURLs() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/**", .status(200))
        let client = try makeClient(mock)
        _ = try await client.send(Call(baseURL: "https://other.test/v2"))
        #expect(mock.recordedRequests.last?.head.authority == "other.test")
        #expect(mock.recordedRequests.last?.head.path == "/v2/x")
        let bare = try NetworkClient(configuration: ClientConfiguration(baseURL: nil, transport: "mock"), transport: mock)
        do {
            _ = try await bare.send(Call())
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest)
        }
    }

    @Test("secrets never appear in errors: header values and token-like query values are redacted")
    func redaction() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/**", .status(500))
        let client = try makeClient(mock)
        let call = Call(
            query: [QueryItem("access_token", "SECRET1"), QueryItem("api_key", "SECRET2"), QueryItem("page", "2")],
            headers: ["Authorization": "Bearer SECRET3"])
        do {
            _ = try await client.send(call)
            Issue.record("must fail")
        } catch let error as NetworkError {
            let text = "\(error) \(error.request?.url ?? "") \(error.shortDescription)"
            for secret in ["SECRET1", "SECRET2", "SECRET3"] { #expect(!text.contains(secret)) }
            #expect(error.request?.url == "https://api.test/x?access_token=REDACTED&api_key=REDACTED&page=2")
        }
        let bad = Call(headers: ["Authorization": "Bearer SECRET4\r\nX-Evil: 1"])
        do {
            _ = try await client.send(bad)
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest)
            #expect(!"\(error)".contains("SECRET4"))
        }
        #expect(Redaction.redactedURL("https://user:pw@h.test/p?token=abc&x=1") == "https://h.test/p?token=REDACTED&x=1")
    }

    @Test("an Encodable that fails to encode makes the call invalid, without I/O")
    func unencodableJSON() async throws {
        struct Broken: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "broken"))
            }
        }
        let mock = MockTransport()
        let client = try makeClient(mock)
        do {
            _ = try await client.send(Call(body: .json(Broken())))
            Issue.record("must fail")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest)
        }
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a multipart body is read in bounded chunks, file parts lazily from disk")
    func multipartChunks() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-chunks-\(UUID().uuidString)")
        try Data(repeating: 7, count: 200_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData(boundary: "b")
        form.addField("a", "1")
        form.addFile("f", at: file)
        let body = RequestBody.multipart(form)
        var total = 0
        var largest = 0
        for try await chunk in body.chunks(chunkSize: 16_384) {
            total += chunk.count
            largest = max(largest, chunk.count)
        }
        #expect(Int64(total) == body.length)
        #expect(largest <= 16_384)
        #expect(
            body.length == Int64(200_000) + Int64("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n".utf8.count)
                + Int64(
                    "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(file.lastPathComponent)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                        .utf8.count)
                + 2 + Int64("--b--\r\n".utf8.count))
    }

    @Test("a file body is the file's bytes, read in bounded chunks, replayable, with its length known up front")
    func fileBody() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-file-\(UUID().uuidString)")
        let bytes = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let body = RequestBody.file(file, contentType: "application/x-test")
        #expect(body.length == 150_000)
        #expect(body.contentType == "application/x-test")
        #expect(body.bufferedData == nil, "a file is never read into memory up front")
        for _ in 0..<2 {
            var read = Data()
            for try await chunk in body.chunks(chunkSize: 16_384) {
                #expect(chunk.count <= 16_384)
                read.append(chunk)
            }
            #expect(read == bytes)
        }
    }

    @Test("a missing file, or a directory, as the body fails as an invalid request before any I/O")
    func missingFileBody() async throws {
        let mock = MockTransport()
        let client = try makeClient(mock)
        let missing = URL(fileURLWithPath: "/nonexistent/courier-\(UUID().uuidString)")
        for url in [missing, FileManager.default.temporaryDirectory] {
            do {
                _ = try await client.send(Call(body: .file(url)))
                Issue.record("must fail")
            } catch let error as NetworkError {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains(url.path))
            }
        }
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a body reader shared by several threads hands out every chunk once")
    func sharedBodyReader() throws {
        // Each 8-byte chunk holds its own index, so a chunk handed out twice or torn shows.
        let chunks = 20_000
        var data = Data(capacity: chunks * 8)
        for index in 0..<chunks { withUnsafeBytes(of: UInt64(index).littleEndian) { data.append(contentsOf: $0) } }
        let reader = RequestBody.data(data).makeReader(chunkSize: 8)
        let seen = Locked([Int]())
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [Int] = []
            do {
                while let chunk = try reader.next() {
                    guard chunk.count == 8 else {
                        failures.withLock { $0 += 1 }
                        continue
                    }
                    mine.append(Int(chunk.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }))
                }
            } catch {
                failures.withLock { $0 += 1 }
            }
            seen.withLock { $0 += mine }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(seen.withLock { $0.sorted() } == Array(0..<chunks))
        #expect(try reader.next() == nil, "at the end it stays at the end")
    }
}
