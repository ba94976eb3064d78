import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// A call's progress, the same on every transport: the request body's bytes as the transport
/// hands them over, the response body's as the call reads them, the expected lengths, and one
/// last report when the call ends, whatever its outcome (issue 42).
extension ConformanceCases {
    /// Every report of `reporter`, read while `call` runs.
    private static func reports<T: Sendable>(
        _ reporter: ProgressReporter, during call: () async throws -> T
    ) async throws -> (T, [TransferProgress]) {
        let reading = Task {
            var seen: [TransferProgress] = []
            for await update in reporter.updates { seen.append(update) }
            return seen
        }
        let outcome: T
        do {
            outcome = try await call()
        } catch {
            _ = await reading.value
            throw error
        }
        return (outcome, await reading.value)
    }

    /// The checks every call's reports pass: at least the last one, which is finished and the
    /// only finished one, and received bytes that never go back.
    private static func checkOrder(_ seen: [TransferProgress], _ label: String) {
        #expect(seen.last?.isFinished == true, "\(label): no last report in \(seen)")
        #expect(seen.filter(\.isFinished).count == 1, "\(label): \(seen)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "\(label): \(seen)")
    }

    /// An upload (in memory, and a stream of unknown length) and a download report their bytes and
    /// lengths; a refused call and a failed one still send their last report; a reporter given to
    /// a second call fails that call; a download to disk reports the whole file across a
    /// resumption.
    public static func progress(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let every = ProgressReporter.Throttle(interval: .zero, fraction: 0)
            let size = 200_000

            // An upload in memory: every byte sent, the echo's length received.
            let upload = ProgressReporter(throttle: every)
            var posted = RawEndpoint(path: "echo", method: .post, body: .data(Data(PatternBody.bytes(in: 0..<size))))
            posted.progress = upload
            let (echoed, sent) = try await reports(upload) { try await client.send(posted) }
            checkOrder(sent, "upload")
            let last = try #require(sent.last)
            #expect(last.bytesSent == Int64(size) && last.expectedBytesSent == Int64(size), "\(last)")
            #expect(last.bytesReceived == Int64(echoed.count) && last.expectedBytesReceived == Int64(echoed.count), "\(last)")
            #expect(sent.allSatisfy { $0.expectedBytesSent == Int64(size) }, "\(sent)")
            #expect(zip(sent, sent.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent }, "\(sent)")

            // A stream of unknown length: its bytes, and no expected length.
            let streamed = ProgressReporter(throttle: every)
            var chunked = RawEndpoint(
                path: "echo", method: .post, body: .stream(PatternBody.Chunks(byteCount: size), length: nil, contentType: nil))
            chunked.progress = streamed
            let (_, streamedReports) = try await reports(streamed) { try await client.send(chunked) }
            checkOrder(streamedReports, "streamed upload")
            #expect(streamedReports.last?.bytesSent == Int64(size), "\(streamedReports)")
            #expect(streamedReports.allSatisfy { $0.expectedBytesSent == nil }, "\(streamedReports)")

            // A download: the pattern's bytes, announced and received.
            let download = ProgressReporter(throttle: every)
            var fetched = RawEndpoint(path: "pattern/\(size)")
            fetched.progress = download
            let (data, received) = try await reports(download) { try await client.send(fetched) }
            checkOrder(received, "download")
            #expect(data.count == size)
            #expect(received.last?.bytesReceived == Int64(size) && received.last?.expectedBytesReceived == Int64(size), "\(received)")
            #expect(received.last?.bytesSent == 0 && received.last?.expectedBytesSent == 0, "\(received)")

            // A refused call ends its reports too, with the refusal's body counted.
            let refused = ProgressReporter(throttle: every)
            var failing = RawEndpoint(path: "status/503")
            failing.progress = refused
            let refusedReports = try await reports(refused) { () async -> NetworkError? in
                do {
                    _ = try await client.send(failing)
                    return nil
                } catch {
                    return error as? NetworkError
                }
            }
            #expect(refusedReports.0?.status == 503)
            checkOrder(refusedReports.1, "refused")
            #expect(refusedReports.1.last?.bytesReceived ?? 0 > 0, "\(refusedReports.1)")

            // A reporter reports one call: a second call given it fails, before sending anything.
            let before = server.requestCount
            await #expect(throws: NetworkError.self) { try await client.send(fetched) }
            #expect(server.requestCount == before, "the second call with a used reporter was sent")

            // A download to disk counts the whole file, across a cut and its resumption.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-progress-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = ProgressReporter(throttle: every)
            var resumable = RawEndpoint(
                path: "download/\(UUID().uuidString)", query: [QueryItem("bytes", "\(size)"), QueryItem("cutAt", "70000")])
            resumable.progress = file
            let (result, fileReports) = try await reports(file) {
                try await client.download(resumable, to: directory.appendingPathComponent("file.bin"))
            }
            #expect(result.resumed == 1, "\(result)")
            checkOrder(fileReports, "download to disk")
            #expect(
                fileReports.last?.bytesReceived == Int64(size) && fileReports.last?.expectedBytesReceived == Int64(size), "\(fileReports)")
            await client.shutdown()
        }
    }

}
