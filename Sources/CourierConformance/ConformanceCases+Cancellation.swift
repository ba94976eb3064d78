import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Where a call is when its task is cancelled.
public enum CancelPhase: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Waiting in a ``RequestQueue`` behind another call.
    case queued
    /// Opening a connection to a host that never accepts.
    case connecting
    /// Sending a 1 GiB body (a sparse file, streamed from disk).
    case uploading
    /// Waiting for the head of a response the server delays by 10 s.
    case awaitingHead
    /// Reading a body the server drips out.
    case downloading

    /// The raw value.
    public var description: String { rawValue }
}

extension ConformanceCases {
    /// A POST of a body to the echo route.
    struct Upload: Endpoint {
        typealias Output = Data
        var path: String { "echo" }
        var method: HTTPRequest.Method { .post }
        var body: RequestBody?
    }

    /// Cancelling a call's task in any phase ends it as ``NetworkError/Kind/cancelled`` within a
    /// second, and the server sees the connection closed (a queued call never reaches it).
    public static func cancelInPhase(_ transport: ConformanceTransport, phase: CancelPhase) async throws {
        let blackhole = try FullBacklogListener()
        defer { blackhole.close() }
        try await withServer { server in
            let client =
                phase == .connecting
                ? try transport.makeClient(baseURL: "http://127.0.0.1:\(blackhole.port)") { $0.requestTimeout = .seconds(30) }
                : try transport.makeClient(server) { $0.requestTimeout = .seconds(30) }
            let uploadFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cancel-\(UUID().uuidString).bin")
            defer { try? FileManager.default.removeItem(at: uploadFile) }
            var blocker: Task<Data, any Error>?
            let task: Task<Data, any Error>
            switch phase {
            case .queued:
                let queue = try RequestQueue(limits: .init(maxConcurrent: 1))
                blocker = Task { try await client.send(QueuedCall(path: "delay/2000", queue: queue)) }
                #expect(await eventually { server.requestCount == 1 })
                task = Task { try await client.send(QueuedCall(path: "bytes/10", queue: queue)) }
                try await Task.sleep(for: .milliseconds(100))
            case .connecting:
                task = Task { try await client.send(RawEndpoint(path: "x")) }
                try await Task.sleep(for: .milliseconds(100))
            case .uploading:
                #expect(FileManager.default.createFile(atPath: uploadFile.path, contents: nil))
                let handle = try FileHandle(forWritingTo: uploadFile)
                try handle.truncate(atOffset: 1 << 30)  // 1 GiB, sparse
                try handle.close()
                var form = MultipartFormData()
                form.addFile("f", at: uploadFile)
                task = Task { try await client.send(Upload(body: .multipart(form))) }
                // URLSession stages the whole body to a file before it sends a byte: on a loaded
                // machine, writing 1 GiB through the page cache has taken over 10 s.
                #expect(await eventually(timeout: .seconds(60)) { server.requestCount == 1 })
            case .awaitingHead:
                task = Task { try await client.send(RawEndpoint(path: "delay/10000")) }
                #expect(await eventually { server.requestCount == 1 })
            case .downloading:
                task = Task { try await client.send(RawEndpoint(path: "stream/1000", query: [QueryItem("delayMs", "10")])) }
                #expect(await eventually { server.requestCount == 1 })
                try await Task.sleep(for: .milliseconds(50))
            }
            let cancelledAt = ContinuousClock.now
            task.cancel()
            await expectNetworkError(.cancelled) { try await task.value }
            let waited = cancelledAt.duration(to: .now)
            #expect(waited < .seconds(1), "cancel took \(waited)")
            switch phase {
            case .queued:
                _ = try await blocker?.value
                #expect(server.requestCount == 1, "the cancelled call must never reach the server")
            case .connecting:
                break
            case .uploading, .awaitingHead, .downloading:
                #expect(await eventually { server.connectionsOpen == 0 }, "the server must see the connection closed")
            }
            await client.shutdown()
        }
    }

    /// A call that waits in a given queue.
    struct QueuedCall: Endpoint {
        typealias Output = Data
        var path: String
        var queue: RequestQueue
        var requestQueue: RequestQueue? { queue }
    }
}
