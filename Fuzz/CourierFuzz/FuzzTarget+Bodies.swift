import Courier
import Foundation
import HTTPTypes

@testable import Courier
@testable import CourierXML

/// The targets that read response bodies: content decoding and XML/SOAP.
extension FuzzTarget {
    static let bodies: [FuzzTarget] = [
        // A response body under one or two content codings. The first input byte picks the
        // codings and the size of the chunks the streamed path receives; the rest is the body.
        // Both paths run: the whole body in memory, and a stream of chunks read in order.
        FuzzTarget(name: "decompression") { bytes in
            guard let selector = bytes.first else { return }
            let body = Data(bytes.dropFirst())
            let codings: [[ContentCoding]] = [[.gzip], [.deflate], [.gzip, .deflate], [.deflate, .gzip]]
            let chosen = codings[Int(selector & 0x03)]
            let chunkSize = 1 + Int(selector >> 2) * 7
            let limits = DecodedBody.Limits(maxBytes: 4 << 20, maxRatio: 100)
            if let decoded = try? DecodedBody.decode(ResponseBody(data: body), codings: chosen, names: "fuzz", limits: limits),
                case .buffered(let data) = decoded.storage
            {
                precondition(data.count <= limits.maxBytes, "a decoded body passed its cap")
            }
            let chunks = stride(from: 0, to: body.count, by: chunkSize).map { body[$0..<min($0 + chunkSize, body.count)] }
            let stream = AsyncThrowingStream<Data, any Error> { continuation in
                for chunk in chunks { continuation.yield(Data(chunk)) }
                continuation.finish()
            }
            guard
                let streamed = try? DecodedBody.decode(
                    ResponseBody(stream: stream, expectedLength: nil), codings: chosen, names: "fuzz", limits: limits)
            else { return }
            StreamedReads.run {
                var total = 0
                do {
                    for try await chunk in streamed {
                        precondition(chunk.count <= DecodedBody.chunkBytes + 65_536, "one read returned too much")
                        total += chunk.count
                    }
                } catch {}
                precondition(total <= limits.maxBytes + DecodedBody.chunkBytes, "a streamed body passed its cap")
            }
        },
        // An XML document decoded into a typed value, and as a SOAP answer (result or fault) with
        // the status the first byte picks.
        FuzzTarget(name: "xml") { bytes in
            guard let selector = bytes.first else { return }
            let data = Data(bytes.dropFirst())
            let options = XMLTreeDecoding.Options(XMLCoding.makeDecoder())
            let limits = XMLLimits(maxBytes: 1 << 20, maxDepth: 64)
            _ = try? XMLCoding.decode(FuzzOrder.self, from: data, options: options, limits: limits)
            let status = [200, 400, 500][Int(selector) % 3]
            _ = try? SOAPResponseReading.decode(
                FuzzOrder.self, from: data, head: HTTPResponse(status: .init(code: status)), options: options, limits: limits)
            _ = SOAPFaultReader.read(data)
        },
    ]
}

/// The shape the XML target decodes: nested elements, lists, optionals, numbers and a date.
struct FuzzOrder: Decodable {
    struct Item: Decodable {
        var sku: String
        var quantity: Int
        var price: Double?
    }
    var id: Int
    var customer: String
    var note: String?
    var paid: Bool?
    var created: Date?
    var items: [Item]
    var tags: [String]?
}

/// Reads the fuzz targets' streamed bodies on one task that lives as long as the process, and
/// tells the waiting input only once a read's frames and closure are freed. A task made per input
/// signalled its end before the runtime freed it, and LeakSanitizer, checking between inputs, once
/// saw its last allocations (244 bytes in 4, in a CI run of the `decompression` target).
enum StreamedReads {
    /// One read, and the semaphore its input waits on.
    private final class Job: @unchecked Sendable {
        // @unchecked: `read` is taken once, by the reading task, before `done` is signalled;
        // DispatchSemaphore is safe to signal from any thread.
        var read: (@Sendable () async -> Void)?
        let done = DispatchSemaphore(value: 0)
        init(_ read: @escaping @Sendable () async -> Void) { self.read = read }

        /// Runs the read and drops it: its closure is released before this returns.
        func perform() async {
            let read = self.read
            self.read = nil
            await read?()
        }
    }

    private static let jobs: AsyncStream<Job>.Continuation = {
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        Task {
            for await job in stream {
                await job.perform()
                job.done.signal()
            }
        }
        return continuation
    }()

    /// Runs `read` on the reading task and waits until it has returned.
    static func run(_ read: @escaping @Sendable () async -> Void) {
        let job = Job(read)
        jobs.yield(job)
        job.done.wait()
    }
}
