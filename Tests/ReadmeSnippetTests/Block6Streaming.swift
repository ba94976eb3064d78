// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import Foundation

struct DownloadReport: Endpoint {
    typealias Output = Data
    let id: Int
    var path: String { "reports/\(id)" }
}

struct UploadArchive: Endpoint {
    typealias Output = Data
    var path: String { "archives" }
    var method: HTTPRequest.Method { .put }
    let body: RequestBody?
}

func streaming(client: NetworkClient, file: FileHandle, chunks: some AsyncSequence<Data, any Error> & Sendable) async throws {
    // README block 6
    let report = try await client.stream(DownloadReport(id: 7))     // returns at the head; the deadline still runs
    for try await chunk in report.body { try file.write(contentsOf: chunk) }   // backpressure: curl and ahc pause while you write

    let upload = RequestBody.stream(chunks, length: nil)            // chunked; sent once, never retried
    _ = try await client.send(UploadArchive(body: upload))
    // README end
}
