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
        try await performStreaming(CallDescription(endpoint))
    }

    /// A streamed call, in its queue when it has one. Such a call never shares an identical call's
    /// transfer (each reader needs its own body). The queue tracks it (for ``RequestQueue/cancelAll(_:)``
    /// and batches) until its head arrives; its slot is held until its body ends.
    func performStreaming<Output>(_ call: CallDescription<Output>) async throws(NetworkError) -> StreamedResponse {
        guard let queue = call.requestQueue ?? queue else { return try await openStream(call, placement: nil) }
        let placement = QueuePlacement(queue: queue, priority: call.priority, deduplication: .never, onStart: call.onStart)
        let membership = CallMembership(tags: call.tags, team: call.team, batch: call.batch)
        let result = await queue.tracking(membership) { () async -> Result<StreamedResponse, NetworkError> in
            do throws(NetworkError) {
                return .success(try await self.openStream(call, placement: placement))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Builds the request, opens the call (see `open`), checks the status, and hands the body over
    /// wrapped so that its end closes and reports the call.
    private func openStream<Output>(
        _ call: CallDescription<Output>, placement: QueuePlacement?
    ) async throws(NetworkError) -> StreamedResponse {
        let start = now()
        let recorder = TransferRecorder(transport: transport.name)
        let requestID = Self.makeRequestID()
        let logger = call.logger ?? configuration.logger
        let ending = CallEnding(requestID: requestID, logger: logger, recorder: recorder, start: start)
        let built: (request: HTTPRequest, body: RequestBody?, ownHeaderNames: Set<HTTPField.Name>)
        switch build(call) {
        case .success(let request): built = request
        case .failure(let error): throw concluded(error, sent: nil, call: call, ending)
        }
        let request = built.request
        let opened: OpenedCall
        do throws(NetworkError) {
            opened = try await open(
                request, built.body, ownHeaderNames: built.ownHeaderNames, placement: placement, team: call.team,
                endpointName: call.endpointName, timeout: call.timeout ?? configuration.requestTimeout, httpVersion: call.httpVersion,
                cachePolicy: call.cachePolicy ?? configuration.cachePolicy, requestID: requestID, logger: logger, recorder: recorder,
                start: start, streams: true)
        } catch {
            throw concluded(error, sent: request, call: call, ending)
        }
        let scope = opened.scope
        let head = opened.response.head
        recorder.enter(.receiving)
        guard call.statusValidation.isAcceptable(head.status.code) else {
            // Refused: the start of the body goes into the error, as for a buffered call.
            var failure: NetworkError
            do {
                let data = try await opened.response.body.collect(upTo: scope.maxResponseBytes)
                let decodeStart = now()
                recorder.update(entering: .validating) {
                    $0.network = scope.networkStart.duration(to: decodeStart)
                    $0.bytesReceived = Int64(data.count)
                }
                failure = refused(head.status, data: data, errorDecoder: call.errorDecoder)
            } catch {
                failure = scope.failure(error)
            }
            scope.disarm()
            scope.close()
            throw concluded(failure, sent: request, call: call, ending)
        }
        let authority = request.authority
        /// The call's end, once its whole body was read: the metrics, the log line and the observers.
        @Sendable func succeeded(bytes: Int64) -> RequestMetrics {
            let end = now()
            let metrics = recorder.updated {
                $0.network = scope.networkStart.duration(to: end)
                $0.bytesReceived = bytes
                $0.total = start.duration(to: end)
            }
            report(status: head.status.code, metrics: metrics, of: call, ending, authority: authority)
            return metrics
        }
        if let whole = try? opened.response.body.bufferedBytes(upTo: scope.maxResponseBytes) {
            // The transport had the whole body by the head (a small response): the call ends now,
            // and the caller reads the bytes from memory.
            scope.disarm()
            scope.close()
            let metrics = succeeded(bytes: Int64(whole.count))
            return StreamedResponse(head: head, body: ResponseBody(data: whole), metrics: metrics)
        }
        let source = StreamedCallBody(body: opened.response.body, limit: scope.maxResponseBytes) { [self] bytes, error in
            scope.disarm()
            defer { scope.close() }
            if let error {
                recorder.update { $0.bytesReceived = bytes }
                return concluded(scope.failure(error), sent: request, call: call, ending)
            }
            _ = succeeded(bytes: bytes)
            return nil
        }
        return StreamedResponse(
            head: head, body: ResponseBody(source: source, expectedLength: opened.response.body.expectedLength),
            metrics: recorder.metrics)
    }

    /// `error` completed with the request and the metrics, logged and told to the observers.
    func concluded<Output>(_ error: NetworkError, sent: HTTPRequest?, call: CallDescription<Output>, _ ending: CallEnding) -> NetworkError {
        let failure = failed(error, sent: sent, unsent: call, ending)
        report(failure, of: call, ending, authority: sent?.authority)
        return failure
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
    private var received: Int64 = 0
    private var ending: Ending?
    /// The error the body ended with, thrown again to a reader that asks after the end.
    private var failure: NetworkError?

    init(body: ResponseBody, limit: Int, ending: @escaping Ending) {
        iterator = body.makeAsyncIterator()
        self.limit = limit
        self.ending = ending
    }

    func next() async throws -> Data? {
        if let failure { throw failure }
        guard ending != nil else { return nil }
        do {
            guard let chunk = try await iterator?.next() else {
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
