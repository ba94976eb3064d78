import Foundation
import HTTPTypes
import Testing

@testable import Courier
@testable import CourierStreaming

@Suite("Download parts: the SHA-256 a download is checked with, and the ranges it reads")
struct DownloadPartsTests {
    private func digest(_ pieces: [[UInt8]]) -> String {
        var digest = SHA256Digest()
        for piece in pieces { piece.withUnsafeBytes { digest.update($0) } }
        return digest.hex()
    }

    @Test("FIPS 180-4 vectors, fed whole and in uneven pieces")
    func vectors() {
        #expect(digest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest([Array("abc".utf8)]) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(digest([long]) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(digest([Array(long[0..<3]), Array(long[3..<40]), Array(long[40...])]) == digest([long]))
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            digest([Array(million[..<333_333]), Array(million[333_333...])])
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("a 206 continues the file only when it is of the same version: start, total, ETag or Last-Modified")
    func sameVersionOnly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-parts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        func run(first: HTTPFields) throws -> DownloadRun {
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let file = try #require(FileHandle(forWritingAtPath: path))
            var run = DownloadRun(options: DownloadOptions(), file: file)
            try run.take(HTTPResponse(status: .ok, headerFields: first))
            try run.write(Data(repeating: 1, count: 100))
            return run
        }
        func partial(_ range: String, _ extra: [(HTTPField.Name, String)] = []) -> HTTPResponse {
            var fields: HTTPFields = [.contentRange: range]
            for (name, value) in extra { fields[name] = value }
            return HTTPResponse(status: .partialContent, headerFields: fields)
        }
        let tagged: HTTPFields = [.eTag: "\"v1\"", .contentLength: "300"]
        let cases: [(String, HTTPResponse, Bool)] = [
            ("same ETag and total", partial("bytes 100-299/300", [(.eTag, "\"v1\"")]), true),
            ("unknown total", partial("bytes 100-299/*", [(.eTag, "\"v1\"")]), true),
            ("another ETag", partial("bytes 100-299/300", [(.eTag, "\"v2\"")]), false),
            ("no ETag", partial("bytes 100-299/300"), false),
            ("another total", partial("bytes 100-399/400", [(.eTag, "\"v1\"")]), false),
            ("another start", partial("bytes 50-299/300", [(.eTag, "\"v1\"")]), false),
            ("end before start", partial("bytes 100-99/300", [(.eTag, "\"v1\"")]), false),
            ("end past total", partial("bytes 100-300/300", [(.eTag, "\"v1\"")]), false),
            ("not digits", partial("bytes 100-2x9/300", [(.eTag, "\"v1\"")]), false),
        ]
        for (name, response, continues) in cases {
            var download = try run(first: tagged)
            if continues {
                #expect(throws: Never.self, "\(name)") { try download.take(response) }
            } else {
                let error = #expect(throws: NetworkError.self, "\(name)") { try download.take(response) }
                #expect(error?.kind == .invalidResponse, "\(name)")
            }
        }
        let dated: HTTPFields = [.lastModified: "Wed, 21 Oct 2026 07:28:00 GMT", .contentLength: "300"]
        var same = try run(first: dated)
        try same.take(partial("bytes 100-299/300", [(.lastModified, "Wed, 21 Oct 2026 07:28:00 GMT")]))
        var changed = try run(first: dated)
        #expect(throws: NetworkError.self) {
            try changed.take(partial("bytes 100-299/300", [(.lastModified, "Thu, 22 Oct 2026 07:28:00 GMT")]))
        }
    }

    @Test("maxBytes caps the whole file, across a resumption")
    func oneCapForTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let file = try #require(FileHandle(forWritingAtPath: path))
        var options = DownloadOptions()
        options.maxBytes = 150
        var run = DownloadRun(options: options, file: file)
        try run.take(HTTPResponse(status: .ok, headerFields: [.eTag: "\"v1\"", .contentLength: "300"]))
        try run.write(Data(count: 100))
        try run.take(HTTPResponse(status: .partialContent, headerFields: [.contentRange: "bytes 100-299/300", .eTag: "\"v1\""]))
        try run.write(Data(count: 50))
        let error = #expect(throws: NetworkError.self) { try run.write(Data(count: 1)) }
        #expect(error?.kind == .responseTooLarge)
        #expect(run.written == 150)
    }

    @Test("a 206's Content-Range is read for where it starts")
    func contentRange() {
        #expect(DownloadRun.parts(ofRange: "bytes 100000-299999/300000")?.start == 100_000)
        #expect(DownloadRun.parts(ofRange: "bytes 0-9/*")?.start == 0)
        #expect(DownloadRun.parts(ofRange: "items 1-2/3")?.start == nil)
        #expect(DownloadRun.parts(ofRange: "bytes */300000")?.start == nil)
    }

    @Test("a destination that is not a file path is refused before anything is sent")
    func destination() async throws {
        let client = try NetworkClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9"), transport: NeverTransport())
        struct File: Endpoint {
            typealias Output = Data
            var path: String { "file" }
        }
        for bad in [URL(string: "https://example.com/x")!, URL(fileURLWithPath: "/tmp/", isDirectory: true)] {
            await #expect(throws: NetworkError.self) { try await client.download(File(), to: bad) }
        }
        await client.shutdown()
    }
}

/// A transport a test never expects to be called.
private struct NeverTransport: Transport {
    var name: String { "never" }
    func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        throw NetworkError(kind: .transportFailure, phase: .sending, message: "the never transport was called")
    }
    func shutdown() async {}

    @Test("the whole file's size: a 206's Content-Range total, digits only, at least what was written, at most the cap")
    func expectedSize() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-size-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try #require(FileHandle(forWritingAtPath: url.path))
        defer { try? handle.close() }
        var options = DownloadOptions()
        options.maxBytes = 1000
        var run = DownloadRun(options: options, file: handle)
        try run.take(HTTPResponse(status: .ok, headerFields: [.eTag: "\"a\""]))
        #expect(run.expectedSize(announcing: 500) == 500)
        #expect(run.expectedSize(announcing: 5000) == nil, "over the cap")
        #expect(run.expectedSize(announcing: nil) == nil)
        try run.write(Data(count: 100))
        let totals: [(String, Int64?)] = [
            ("bytes 100-499/500", 500), ("bytes 100-499/*", nil), ("bytes 100-499/9223372036854775807", nil),
            ("bytes 100-499/99999999999999999999", nil), ("bytes 100-499/-5", nil), ("bytes 100-499/50", nil),
            ("bytes 100-499/+500", nil), ("bytes 100-499/\u{665}\u{660}\u{660}", nil), ("bytes 100-499/", nil),
        ]
        for (range, expected) in totals {
            // A total that is not the file's (or not digits) is refused at the head, or unknown.
            do {
                try run.take(HTTPResponse(status: .partialContent, headerFields: [.contentRange: range, .eTag: "\"a\""]))
                #expect(run.expectedSize(announcing: 400) == expected, "\(range)")
            } catch {
                #expect(expected == nil, "\(range) was refused: \(error)")
            }
        }
    }
}
