import CourierConformance
import CourierMock
import Foundation
import HTTPTypes
import Testing

@testable import Courier
@testable import CourierStreaming

/// A download's part file and note, against a mock server: what a previous run left is taken over
/// only when it is this user's and of the same resource, a range the server cannot satisfy starts
/// the file over, and two downloads to one destination at once each end whole.
@Suite("Download part files: the note, 416, two at once, long names")
struct DownloadFileTests {
    static let body = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    private func withDirectory(_ work: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-part-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await work(directory)
    }

    private func client(_ mock: MockTransport) throws -> NetworkClient {
        try NetworkClient(configuration: ClientConfiguration(baseURL: "https://files.test"), transport: mock)
    }

    /// Leaves what a failed run leaves: `bytes` of the body in the part file and a note for
    /// `GET https://files.test/file` with the validator `"v1"`.
    private func leave(_ bytes: Int, for target: URL, resource: String) throws {
        var partial = try PartialFile.open(for: target, resource: resource, resumes: true)
        try partial.handle.write(contentsOf: Self.body.prefix(bytes))
        partial.record(validator: "\"v1\"", total: nil)
        partial.abandon(keeping: true)
    }

    private func resource(of client: NetworkClient) -> String {
        RepeatPlan(RawEndpoint(path: "file"), on: client).resource
    }

    private func left(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test("a range the server cannot satisfy (416) starts the file over; nothing is left")
    func unsatisfiableRange() async throws {
        try await withDirectory { directory in
            let mock = MockTransport()
            let whole = MockResponse.status(200, headers: ["ETag": "\"v2\""], body: Self.body)
            mock.stub(.get, "/file", responses: [.status(416, headers: ["Content-Range": "bytes */5000"]), whole])
            let client = try client(mock)
            let target = directory.appendingPathComponent("file.bin")
            try leave(5000, for: target, resource: resource(of: client))
            let result = try await client.download(RawEndpoint(path: "file"), to: target)
            #expect(result.restarted == 1 && result.resumed == 0, "\(result)")
            #expect(try Data(contentsOf: target) == Self.body)
            #expect(mock.recordedRequests.first?.head.headerFields[.range] == "bytes=5000-")
            #expect(mock.recordedRequests.last?.head.headerFields[.range] == nil)
            #expect(try left(in: directory) == ["file.bin"])
            await client.shutdown()
        }
    }

    @Test("a note that is not this user's private file, or of another resource, is not taken over")
    func foreignNotes() async throws {
        try await withDirectory { directory in
            let mock = MockTransport()
            mock.stub(.get, "/file", .status(200, headers: ["ETag": "\"v1\""], body: Self.body))
            let client = try client(mock)
            let target = directory.appendingPathComponent("file.bin")
            let note = directory.appendingPathComponent(".file.bin.part-info")
            // Readable by others: ignored.
            try leave(1000, for: target, resource: resource(of: client))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: note.path)
            var result = try await client.download(RawEndpoint(path: "file"), to: target)
            #expect(result.resumed == 0 && mock.recordedRequests.last?.head.headerFields[.range] == nil, "\(result)")
            // Another resource's note: ignored.
            try leave(1000, for: target, resource: String(repeating: "0", count: 64))
            result = try await client.download(RawEndpoint(path: "file"), to: target)
            #expect(result.resumed == 0 && mock.recordedRequests.last?.head.headerFields[.range] == nil, "\(result)")
            // A link in the note's place: ignored, and the file it points at untouched.
            let elsewhere = directory.appendingPathComponent("elsewhere")
            try Data("secret".utf8).write(to: elsewhere)
            try leave(1000, for: target, resource: resource(of: client))
            try FileManager.default.removeItem(at: note)
            try FileManager.default.createSymbolicLink(at: note, withDestinationURL: elsewhere)
            result = try await client.download(RawEndpoint(path: "file"), to: target)
            #expect(result.resumed == 0, "\(result)")
            #expect(try Data(contentsOf: elsewhere) == Data("secret".utf8))
            #expect(try Data(contentsOf: target) == Self.body)
            await client.shutdown()
        }
    }

    @Test("the note of this resource is taken over: the rest is asked for and appended")
    func resumesFromTheNote() async throws {
        try await withDirectory { directory in
            let mock = MockTransport()
            let rest = MockResponse.status(
                206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 1000-4999/5000"], body: Self.body.suffix(from: 1000))
            mock.stub(.get, "/file", rest)
            let client = try client(mock)
            let target = directory.appendingPathComponent("file.bin")
            try leave(1000, for: target, resource: resource(of: client))
            let result = try await client.download(RawEndpoint(path: "file"), to: target)
            #expect(result.resumed == 1, "\(result)")
            #expect(mock.recordedRequests.first?.head.headerFields[.range] == "bytes=1000-")
            #expect(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("If-Range")!] == "\"v1\"")
            #expect(try Data(contentsOf: target) == Self.body)
            #expect(try left(in: directory) == ["file.bin"])
            await client.shutdown()
        }
    }

    @Test("with resumes off, a note is removed and none is written")
    func noNoteWithoutResumption() async throws {
        try await withDirectory { directory in
            let mock = MockTransport()
            mock.stub(.get, "/file", .failure(NetworkError(kind: .connectionClosed, phase: .receiving, message: "cut")))
            let client = try client(mock)
            let target = directory.appendingPathComponent("file.bin")
            try leave(1000, for: target, resource: resource(of: client))
            var options = DownloadOptions()
            options.resumes = false
            await #expect(throws: NetworkError.self) { try await client.download(RawEndpoint(path: "file"), to: target, options: options) }
            #expect(try left(in: directory).isEmpty)
            await client.shutdown()
        }
    }

    @Test("two downloads to one destination at once both end whole; a long name gets a short part file")
    func twoAtOnceAndLongNames() async throws {
        try await withDirectory { directory in
            let mock = MockTransport()
            mock.stub(.get, "/file", .status(200, headers: ["ETag": "\"v1\""], body: Self.body, delay: .milliseconds(50)))
            let client = try client(mock)
            let target = directory.appendingPathComponent("file.bin")
            async let first = client.download(RawEndpoint(path: "file"), to: target)
            async let second = client.download(RawEndpoint(path: "file"), to: target)
            let (one, two) = try await (first, second)
            #expect(one.bytes == 5000 && two.bytes == 5000)
            #expect(try Data(contentsOf: target) == Self.body)
            #expect(try left(in: directory) == ["file.bin"])
            let long = directory.appendingPathComponent(String(repeating: "é", count: 120) + ".bin")
            _ = try await client.download(RawEndpoint(path: "file"), to: long)
            #expect(try Data(contentsOf: long) == Self.body)
            #expect(PartialFile.partName(for: long.lastPathComponent).utf8.count < 200)
            await client.shutdown()
        }
    }
}

@Suite("LineFramer: JSON Lines records whatever the chunking")
struct LineFramerTests {
    private func lines(_ chunks: [String], cap: Int = 16) throws(NetworkError) -> [String] {
        var framer = LineFramer(maxLineBytes: cap)
        var pieces = chunks[...]
        var found: [String] = []
        while true {
            switch try framer.next() {
            case .line(let line, _): found.append(String(decoding: line, as: UTF8.self))
            case .finished: return found
            case .needMore:
                if let piece = pieces.popFirst() { framer.append(Data(piece.utf8)) } else { framer.end() }
            }
        }
    }

    @Test("lines, CRLF, blank lines and a last line without LF, in any cutting")
    func records() throws {
        let text = "{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"
        let expected = ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]
        #expect(try lines([text]) == expected)
        for size in 1...7 {
            let chunks = stride(from: 0, to: text.count, by: size).map {
                String(Array(text)[$0..<min($0 + size, text.count)])
            }
            #expect(try lines(chunks) == expected, "chunks of \(size)")
        }
    }

    @Test("a line over the cap fails whether it comes whole with its LF or in pieces; appending while unread lines wait loses none")
    func capAndAppending() throws {
        #expect(throws: NetworkError.self) { try lines([String(repeating: "x", count: 17) + "\n{}\n"]) }
        #expect(throws: NetworkError.self) { try lines(Array(repeating: "xxxx", count: 5)) }
        var framer = LineFramer(maxLineBytes: 16)
        framer.append(Data("a\nb\n".utf8))
        #expect(try framer.next() == .line(Data("a".utf8), number: 1))
        framer.append(Data("c\n".utf8))
        #expect(try framer.next() == .line(Data("b".utf8), number: 2))
        #expect(try framer.next() == .line(Data("c".utf8), number: 3))
    }
}
