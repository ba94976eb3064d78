import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The streaming cases: request bodies produced by an async sequence, and responses read as
/// streams through ``NetworkClient/stream(_:)``.
extension ConformanceCases {
    /// A body of three pattern blocks and a part: several chunks, the last one short.
    static let streamedBytes = 3 * PatternBody.blockBytes + 1234

    /// A streamed request body arrives whole and in order, with its length announced
    /// (`Content-Length`) or not (chunked over HTTP/1.1).
    public static func streamedUpload(_ transport: ConformanceTransport, announced: Bool) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let count = streamedBytes
            let body = RequestBody.stream(PatternBody.Chunks(byteCount: count), length: announced ? Int64(count) : nil)
            #expect(body.isReplayable == false)
            let digest = try await client.send(DigestEndpoint(body: body))
            #expect(digest.bodyLength == count)
            #expect(digest.crc32 == PatternBody.crc32(byteCount: count))
            await client.shutdown()
        }
    }

    /// A producer that gives fewer or more bytes than it announced fails the call as
    /// `invalid_request`, whatever the transport had sent by then.
    public static func streamedUploadBreaksLength(_ transport: ConformanceTransport, surplus: Int) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let count = streamedBytes
            let body = RequestBody.stream(PatternBody.Chunks(byteCount: count), length: Int64(count - surplus))
            let error = await expectNetworkError(.invalidRequest) { try await client.send(DigestEndpoint(body: body)) }
            #expect(error?.message.contains("announced") == true, "\(String(describing: error))")
            await client.shutdown()
        }
    }

    /// A streamed response is read chunk by chunk and arrives whole; the call is reported to
    /// observers once, when the body has ended, with every byte counted.
    public static func streamedDownload(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let records = RecordedCalls()
            let client = try transport.makeClient(server, observers: [records])
            // Larger than any transport's response buffer, so it cannot arrive as one piece.
            let count = 8 << 20
            let response = try await client.stream(RawEndpoint(path: "pattern/\(count)"))
            #expect(response.head.status.code == 200)
            #expect(records.all.isEmpty, "the call is still running while its body streams")
            var checksum = PatternBody.Checksum()
            var received = 0
            var chunks = 0
            for try await chunk in response.body {
                checksum.update(chunk)
                received += chunk.count
                chunks += 1
            }
            #expect(received == count)
            #expect(checksum.value == PatternBody.crc32(byteCount: count))
            #expect(chunks > 1, "an 8 MiB body arrives in more than one chunk")
            #expect(await eventually { records.all.count == 1 })
            let record = records.all.first
            #expect(record?.error == nil)
            #expect(record?.status == 200)
            #expect(record?.metrics.bytesReceived == Int64(count))
            #expect(record?.endpoint == "RawEndpoint")
            await client.shutdown()
        }
    }

    /// Cancelling the task that reads a streamed body ends the read with `cancelled` and stops the
    /// transfer: the server sees the request end while it still had most of the body to send.
    public static func streamedCancel(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let records = RecordedCalls()
            let client = try transport.makeClient(server, observers: [records])
            let gate = "stream-cancel-\(UUID().uuidString)"
            let response = try await client.stream(
                RawEndpoint(path: "stream/200", query: [QueryItem("size", "4096"), QueryItem("gate", gate)]))
            let firstChunk = Atomic<Bool>(false)
            let reader = Task {
                var iterator = response.body.makeAsyncIterator()
                _ = try await iterator.next()
                firstChunk.store(true, ordering: .relaxed)
                while try await iterator.next() != nil {}
            }
            #expect(await eventually { firstChunk.load(ordering: .relaxed) }, "the first chunk never arrived")
            reader.cancel()
            let error = await expectNetworkError(.cancelled) { try await reader.value }
            #expect(error?.phase == .receiving)
            #expect(await eventually { records.all.count == 1 })
            #expect(records.all.first?.error?.kind == .cancelled)
            if transport.serverMode != .http1, transport.http2StreamReset == .withNextFrame {
                // The reset leaves with the connection's next frame (see `HTTP2StreamReset`).
                _ = try await client.send(RawEndpoint(path: "bytes/10"))
            }
            #expect(await eventually { server.requestsInFlight == 0 }, "the transfer outlived its reader")
            server.release(gate)
            await client.shutdown()
        }
    }

    /// The call's deadline covers a streamed body until the caller has read it: moved on a manual
    /// clock once the first chunk is in, it ends the read with `timed_out` in phase `receiving`.
    public static func streamedDeadline(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let clock = ManualTimeSource()
            let client = try transport.makeClient(server) { $0.timeSource = clock }
            let gate = "stream-deadline-\(UUID().uuidString)"
            let response = try await client.stream(
                RawEndpoint(path: "stream/200", query: [QueryItem("size", "4096"), QueryItem("gate", gate)], timeout: .seconds(30)))
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            await clock.waitForAlarms(1)
            clock.advance(by: .seconds(30))
            let error = await expectNetworkError(.timedOut) {
                while try await iterator.next() != nil {}
            }
            #expect(error?.phase == .receiving)
            server.release(gate)
            await client.shutdown()
        }
    }
}

/// `POST /digest`: the server's length and CRC-32 of the request body.
struct DigestEndpoint: Endpoint {
    typealias Output = PatternBody.Digest
    var path: String { "digest" }
    var method: HTTPRequest.Method { .post }
    var headers: RequestHeaders = [:]
    var body: RequestBody?
}
