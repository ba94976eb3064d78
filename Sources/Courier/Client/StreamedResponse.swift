import Foundation
import HTTPTypes
import Logging

/// A response whose body the caller reads as it arrives (see ``NetworkClient/stream(_:)``).
///
/// The call is still running while the body is read: the call's deadline covers the body, the
/// client's graceful shutdown waits for it, a queued call keeps its slot, and observers and the
/// log hear about the call once the body has ended (read to the end, failed, or dropped).
/// Reading is the backpressure: the curl and AsyncHTTPClient transports stop taking bytes from the
/// socket while the reader is behind (URLSession's limit is declared in its documentation).
/// Cancelling the reading task, or dropping the body unread, stops the transfer.
public struct StreamedResponse: Sendable {
    /// The status and headers (after redirects, decompression and the cache).
    public let head: HTTPResponse
    /// The body, read once. Its chunks are the decoded bytes (see
    /// ``ClientConfiguration/decompression``), and reading more than
    /// ``ClientConfiguration/maxResponseBytes`` fails with ``NetworkError/Kind/responseTooLarge``.
    /// Every error it throws is a ``NetworkError``.
    public let body: ResponseBody
    /// The metrics when the head arrived; the observers get the whole call's once the body ends.
    public let metrics: RequestMetrics
}

extension NetworkClient {
    /// Runs an endpoint and returns its response head with a body the caller reads as it arrives,
    /// through the same chain as ``send(_:)`` (headers, middleware, retry, redirects, the cache,
    /// decompression, the queue and the deadline).
    ///
    /// The endpoint's ``Endpoint/decoder`` is not used. A status its ``Endpoint/statusValidation``
    /// refuses fails as ``NetworkError/Kind/httpStatus`` with the start of the body, as in
    /// ``send(_:)``; accept every status (``StatusValidation/any``) to read error bodies as streams too.
    /// The request body may be a stream as well (``RequestBody/stream(_:length:contentType:)``).
    /// In a queue, the call never shares an identical call's transfer (each reader needs its own
    /// body); the queue tracks it until its head arrives and holds its slot until its body ends.
    ///
    /// ```swift
    /// let response = try await client.stream(DownloadReport(id: 7))
    /// for try await chunk in response.body { try file.write(contentsOf: chunk) }
    /// ```
    /// - Parameter endpoint: The call.
    /// - Returns: The head, the body and the metrics at the head.
    /// - Throws: ``NetworkError``, before the head; the body's reading throws after it.
    @concurrent
    public func stream<E: Endpoint>(_ endpoint: E) async throws(NetworkError) -> StreamedResponse {
        try await stream(endpoint, bounds: nil)
    }

    /// ``stream(_:)`` with a long transfer's bounds (JSON Lines; downloads and event streams are
    /// ``LongCall``s): the endpoint's timeout bounds the head; the body, its stall limit and end.
    @concurrent
    package func stream<E: Endpoint>(_ endpoint: E, bounds: TransferBounds?) async throws(NetworkError) -> StreamedResponse {
        let call = Call(endpoint, on: self, streams: true, bounds: bounds)
        return try await call.tracked { () async throws(NetworkError) in try await call.openStream() }
    }
}

/// A streamed call's body as its caller reads it: counted against the client's limit, and ending
/// the call exactly once, when the body ends, fails, or is dropped unread.
///
/// `@unchecked Sendable`: a body is read by one task, one chunk at a time (see
/// ``ResponseBodySource``), and `deinit` runs only once no reader is left.
final class StreamedCallBody: ResponseBodySource, @unchecked Sendable {
    /// Ends the call with the bytes read and the error, if any; returns the call's error.
    typealias Ending = @Sendable (_ bytes: Int64, _ error: (any Error)?) -> NetworkError?

    /// The transport's body; released at the end, which stops a transfer the reader gave up on
    /// even while the caller still holds the response.
    private var iterator: ResponseBody.AsyncIterator?
    private let limit: Int
    /// A long transfer's stall limit and end, watched over each wait for bytes.
    private let watch: BodyWatch?
    private var received: Int64 = 0
    private var ending: Ending?
    /// The error the body ended with, thrown again to a reader that asks after the end.
    private var failure: NetworkError?

    init(body: ResponseBody, limit: Int, watch: BodyWatch? = nil, ending: @escaping Ending) {
        iterator = body.makeAsyncIterator()
        self.limit = limit
        self.watch = watch
        self.ending = ending
    }

    func next() async throws -> Data? {
        if let failure { throw failure }
        guard ending != nil else { return nil }
        do {
            // A long transfer's wait for bytes runs under its stall alarm, cancelled as soon as
            // the wait is over (before the body's end runs).
            let alarm = watch?.arm()
            let next: Data?
            do {
                next = try await iterator?.next()
            } catch {
                if let alarm { watch?.disarm(alarm) }
                throw error
            }
            if let alarm { watch?.disarm(alarm) }
            guard let chunk = next else {
                end(nil)
                return nil
            }
            received += Int64(chunk.count)
            if received > Int64(limit) { throw NetworkError.responseTooLarge(limit: limit, announced: nil) }
            return chunk
        } catch {
            let failure = end(error) ?? NetworkError.converting(error, phase: .receiving)
            self.failure = failure
            throw failure
        }
    }

    @discardableResult
    private func end(_ error: (any Error)?) -> NetworkError? {
        guard let ending else { return nil }
        self.ending = nil
        iterator = nil
        return ending(received, error)
    }

    deinit {
        // Dropped before its end: the transport's source goes with the iterator, which stops the transfer.
        end(NetworkError.cancelled(phase: .receiving))
    }
}
