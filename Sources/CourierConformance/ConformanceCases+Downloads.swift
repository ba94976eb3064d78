import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// Downloads to disk: streamed into a temporary file beside the destination, resumed with `Range`
/// and `If-Range` after a cut, started over when the server cannot resume, checked against a
/// checksum, and never left half-written (issue 42).
extension ConformanceCases {
    /// A fresh directory for one case's files, removed afterwards.
    private static func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    /// Whether a file holds the first `count` bytes of ``PatternBody``.
    private static func holdsPattern(_ file: URL, count: Int) throws -> Bool {
        try Data(contentsOf: file) == Data(PatternBody.bytes(in: 0..<count))
    }

    /// Whole, cut and resumed, cut and started over (the file changed, or the server ignores
    /// ranges): each file is the server's bytes exactly, and nothing else is left in the directory.
    public static func downloads(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let calls = RecordedCalls()
            let client = try transport.makeClient(server, observers: [calls])
            try await withDirectory { directory in
                let size = 300_000
                let key = UUID().uuidString
                let cases: [(name: String, query: [QueryItem], resumed: Int, restarted: Int)] = [
                    ("whole", [], 0, 0),
                    ("resumed", [QueryItem("cutAt", "100000")], 1, 0),
                    ("changed", [QueryItem("cutAt", "100000"), QueryItem("changeAfterCut", "1")], 0, 1),
                    ("no-range", [QueryItem("cutAt", "100000"), QueryItem("noRange", "1")], 0, 1),
                ]
                for (index, item) in cases.enumerated() {
                    let before = server.requestCount
                    let endpoint = RawEndpoint(path: "download/\(key)-\(item.name)", query: [QueryItem("bytes", "\(size)")] + item.query)
                    let target = directory.appendingPathComponent("\(item.name).bin")
                    let result = try await client.download(endpoint, to: target)
                    #expect(result.bytes == Int64(size) && result.file == target, "\(item.name)")
                    #expect(
                        (result.resumed == item.resumed && result.restarted == item.restarted) || resentWhole(result, transport, server),
                        "\(item.name): \(result)")
                    #expect(try holdsPattern(target, count: size), "\(item.name): the file is not the body")
                    #expect(server.requestCount - before == 1 + item.resumed + item.restarted, "\(item.name)")
                    // One call, whatever the number of connections: one report with each connection's attempt.
                    #expect(calls.all.count == index + 1, "\(item.name)")
                    #expect(calls.all.last?.metrics.attempts == 1 + result.resumed + result.restarted, "\(item.name)")
                }
                // Redirected to another origin (a CDN): the resumption's Range and If-Range follow.
                let other = server.mode.usesTLS ? "https://127.0.0.1:\(server.port)" : "http://localhost:\(server.port)"
                let redirected = RawEndpoint(
                    path: "redirect-to",
                    query: [QueryItem("url", "\(other)/download/\(key)-redirected?bytes=\(size)&cutAt=100000")])
                let target = directory.appendingPathComponent("redirected.bin")
                let result = try await client.download(redirected, to: target)
                #expect((result.resumed == 1 && result.restarted == 0) || resentWhole(result, transport, server), "\(result)")
                #expect(try holdsPattern(target, count: size))
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                #expect(left == ["changed.bin", "no-range.bin", "redirected.bin", "resumed.bin", "whole.bin"], "\(left)")
            }
            await client.shutdown()
        }
    }

    /// Whether a cut download came whole from a second request the transport made itself
    /// (``ConformanceTransport/resendsHTTP2CutBeforeHead``): nothing resumed, nothing restarted.
    /// The request count still shows both requests.
    private static func resentWhole(_ result: DownloadResult, _ transport: ConformanceTransport, _ server: TestServer) -> Bool {
        transport.resendsHTTP2CutBeforeHead && server.mode != .http1 && result.resumed == 0 && result.restarted == 0
    }

    /// A wrong checksum, or a cut without resumption, fails the download: the destination keeps
    /// what it had, and no temporary file is left. The right checksum passes.
    public static func downloadFailures(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            try await withDirectory { directory in
                let target = directory.appendingPathComponent("kept.txt")
                try Data("old".utf8).write(to: target)
                let key = UUID().uuidString
                var wrong = DownloadOptions()
                wrong.sha256 = String(repeating: "0", count: 64)
                let endpoint = RawEndpoint(path: "download/\(key)-sum", query: [QueryItem("bytes", "70000")])
                let mismatch = await expectNetworkError(.invalidResponse) {
                    try await client.download(endpoint, to: target, options: wrong)
                }
                #expect(mismatch?.message.contains("SHA-256") == true)
                var once = DownloadOptions()
                once.resumes = false
                let cut = RawEndpoint(path: "download/\(key)-cut", query: [QueryItem("bytes", "70000"), QueryItem("cutAt", "1000")])
                await expectNetworkError(.connectionClosed) { try await client.download(cut, to: target, options: once) }
                #expect(try Data(contentsOf: target) == Data("old".utf8), "a failed download touched the destination")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["kept.txt"])
                // The right checksum: the file's own (sha256sum of a whole download).
                let whole = directory.appendingPathComponent("whole.bin")
                _ = try await client.download(endpoint, to: whole)
                let printed = try await ChildProcess.run("/usr/bin/sha256sum", [whole.path], timeout: .seconds(30))
                var right = DownloadOptions()
                right.sha256 = String(printed.output.prefix(64)).uppercased()
                _ = try await client.download(endpoint, to: target, options: right)
                #expect(try holdsPattern(target, count: 70000))
            }
            await client.shutdown()
        }
    }

    /// The permission bits of a file.
    private static func mode(of file: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) ?? -1
    }

    /// The part file: a failed download with bytes and a validator leaves it (0600) and its note,
    /// and the next download of the same URL to the same destination asks for the rest; another URL
    /// to that destination starts over. A link in the part file's place is never written through.
    /// The destination keeps its mode; a new one gets `newFileMode` (0600 by default).
    public static func downloadFiles(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            try await withDirectory { directory in
                let size = 300_000
                let key = UUID().uuidString
                let target = directory.appendingPathComponent("across.bin")
                let part = directory.appendingPathComponent(".across.bin.part")
                let endpoint = RawEndpoint(
                    path: "download/\(key)-across", query: [QueryItem("bytes", "\(size)"), QueryItem("cutAt", "100000")])
                var noResume = DownloadOptions()
                noResume.maxResumes = 0
                let before = server.requestCount
                do {
                    let first = try await client.download(endpoint, to: target, options: noResume)
                    #expect(resentWhole(first, transport, server), "a cut download with no resumption left succeeded: \(first)")
                } catch let error as NetworkError {
                    #expect(error.kind == .connectionClosed, "\(error)")
                    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                    #expect(left == [".across.bin.part", ".across.bin.part-info"], "\(left)")
                    #expect(try mode(of: part) == 0o600)
                    let kept = try Data(contentsOf: part).count
                    #expect(kept > 0 && kept <= 100_000, "\(kept)")
                    // The next run goes on from it: one request, for the rest.
                    let again = server.requestCount
                    let second = try await client.download(endpoint, to: target)
                    #expect(second.resumed == 1 && second.restarted == 0, "\(second)")
                    #expect(server.requestCount - again == 1)
                    #expect(try holdsPattern(target, count: size))
                }
                #expect(server.requestCount - before >= 1)
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["across.bin"])
                #expect(try mode(of: target) == 0o600, "a new destination is 0600 by default")

                // Another URL to the same destination never continues the part file a cut of the
                // first one left (with its genuine note).
                let first = RawEndpoint(
                    path: "download/\(key)-first", query: [QueryItem("bytes", "\(size)"), QueryItem("cutAt", "100000")])
                let cutLeft = (try? await client.download(first, to: target, options: noResume)) == nil
                let noted = try FileManager.default.contentsOfDirectory(atPath: directory.path).contains(".across.bin.part-info")
                #expect(!cutLeft || noted, "the cut left no note")
                let other = RawEndpoint(path: "download/\(key)-other", query: [QueryItem("bytes", "\(size)")])
                let fresh = try await client.download(other, to: target)
                #expect(fresh.resumed == 0 && fresh.restarted == 0, "\(fresh)")
                #expect(fresh.head.headerFields[HTTPField.Name("X-Range-Seen")!] == "", "asked another URL for a range")
                #expect(try holdsPattern(target, count: size))

                // The destination keeps its mode; a link in the part file's place is not followed.
                try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: target.path)
                let elsewhere = directory.appendingPathComponent("elsewhere.txt")
                try Data("untouched".utf8).write(to: elsewhere)
                try FileManager.default.createSymbolicLink(at: part, withDestinationURL: elsewhere)
                _ = try await client.download(other, to: target)
                #expect(try mode(of: target) == 0o640)
                #expect(try Data(contentsOf: elsewhere) == Data("untouched".utf8), "the download wrote through a link")
                #expect(try holdsPattern(target, count: size))
                var open = DownloadOptions()
                open.newFileMode = 0o644
                let shared = directory.appendingPathComponent("shared.bin")
                _ = try await client.download(other, to: shared, options: open)
                #expect(try mode(of: shared) == 0o644)
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                #expect(left == ["across.bin", "elsewhere.txt", "shared.bin"], "\(left)")
            }
            await client.shutdown()
        }
    }
}
