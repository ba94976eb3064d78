import Foundation

/// A response body as it arrives: chunks of bytes, read once, in order.
///
/// Transports create it from bytes already in memory (``init(data:)``), from a stream they feed as
/// data arrives (``init(stream:expectedLength:)``), or from a ``ResponseBodySource`` the reader
/// pulls chunks from (``init(source:expectedLength:)``). When the consumer stops reading (for
/// example because the call was cancelled), the stream terminates and the transport must stop the
/// transfer from the stream's `onTermination` handler, or the source is released and stops the
/// transfer from its `deinit`.
public struct ResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    enum Storage: Sendable {
        case buffered(Data)
        case stream(Chunks)
        case source(any ResponseBodySource)
    }

    /// The transport's stream, behind a reference. `AsyncThrowingStream` is not frozen, so a value
    /// holding it has a size known only at run time: every response, buffered ones included,
    /// would be copied through value witnesses and would cost a task allocation in each async
    /// function that holds one. The box keeps ``ResponseBody`` (and ``TransportResponse``) of a
    /// fixed size, for one allocation per streamed body.
    final class Chunks: Sendable {
        let stream: AsyncThrowingStream<Data, any Error>

        init(_ stream: AsyncThrowingStream<Data, any Error>) {
            self.stream = stream
        }
    }

    let storage: Storage

    /// The length announced by the server (`Content-Length`), when there was one.
    public let expectedLength: Int64?

    /// An empty body.
    public static let empty = ResponseBody(data: Data())

    /// A body already in memory.
    /// - Parameter data: The whole body.
    public init(data: Data) {
        storage = .buffered(data)
        expectedLength = Int64(data.count)
    }

    /// A body fed by the transport as it arrives.
    /// - Parameters:
    ///   - stream: The chunks; finishing with an error fails the call.
    ///   - expectedLength: The announced length, if any.
    public init(stream: AsyncThrowingStream<Data, any Error>, expectedLength: Int64?) {
        storage = .stream(Chunks(stream))
        self.expectedLength = expectedLength
    }

    /// A body the reader pulls from `source`, one chunk per call of its ``ResponseBodySource/next()``
    /// on the reader's own executor: no stream in between, so no executor hop per chunk.
    /// - Parameters:
    ///   - source: Gives the chunks; releasing it (the body and its iterators are gone) must stop
    ///     the transfer.
    ///   - expectedLength: The announced length, if any.
    public init(source: any ResponseBodySource, expectedLength: Int64?) {
        storage = .source(source)
        self.expectedLength = expectedLength
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var buffered: Data?
        var streamIterator: AsyncThrowingStream<Data, any Error>.AsyncIterator?
        var source: (any ResponseBodySource)?

        /// The next chunk, or `nil` at the end.
        /// - Throws: `CancellationError` when the reading task is cancelled: a stream ends quietly
        ///   on cancellation, and a cut-off body must never pass for a complete one.
        public mutating func next() async throws -> Data? {
            if let data = buffered {
                buffered = nil
                return data.isEmpty ? nil : data
            }
            let chunk: Data?
            if let source {
                chunk = try await source.next()
                if chunk == nil { self.source = nil }
            } else {
                chunk = try await streamIterator?.next(isolation: #isolation)
            }
            if chunk == nil, Task.isCancelled { throw CancellationError() }
            return chunk
        }
    }

    /// Makes the iterator; a body can be iterated once.
    public func makeAsyncIterator() -> AsyncIterator {
        switch storage {
        case .buffered(let data): AsyncIterator(buffered: data, streamIterator: nil, source: nil)
        case .stream(let chunks): AsyncIterator(buffered: nil, streamIterator: chunks.stream.makeAsyncIterator(), source: nil)
        case .source(let source): AsyncIterator(buffered: nil, streamIterator: nil, source: source)
        }
    }

    /// Reads the whole body, failing once it is larger than `limit`.
    ///
    /// - Parameter limit: The largest body accepted, in bytes.
    /// - Returns: The body.
    /// - Throws: ``NetworkError/Kind/responseTooLarge`` as soon as the limit is passed (or at once
    ///   when the announced length is already over it); whatever the transport's stream fails with.
    public func collect(upTo limit: Int) async throws -> Data {
        if let expectedLength, expectedLength > limit {
            throw NetworkError.responseTooLarge(limit: limit, announced: expectedLength)
        }
        if case .buffered(let data) = storage { return data }
        return try await collectStream(upTo: limit)
    }

    /// The whole body when it is already in memory, checked against `limit`; `nil` for a stream.
    /// Synchronous, so a caller that holds a buffered body never enters an async function for it.
    /// - Throws: ``NetworkError/Kind/responseTooLarge``.
    package func bufferedBytes(upTo limit: Int) throws -> Data? {
        guard case .buffered(let data) = storage else { return nil }
        guard data.count <= limit else {
            throw NetworkError.responseTooLarge(limit: limit, announced: expectedLength ?? Int64(data.count))
        }
        return data
    }

    /// The most set aside at once for a body's announced length: a larger body grows as it
    /// arrives, so a length a server only claims reserves no more than this (8 MiB). Transports
    /// that size their buffers ahead read it too.
    public static let maxReservation = 8 << 20

    /// Reads a streamed body. Its own function: the stream's iterator (of a size known only at
    /// run time) is allocated here, not by every ``collect(upTo:)`` of a buffered body.
    @inline(never)
    private func collectStream(upTo limit: Int) async throws -> Data {
        var whole = Data()
        for try await chunk in self {
            guard whole.count + chunk.count <= limit else { throw NetworkError.responseTooLarge(limit: limit, announced: nil) }
            guard !whole.isEmpty else {
                // The first chunk becomes the body, without a copy (unless it is a slice: the body
                // starts at index 0); a transport that sized it for the announced length has the
                // room already.
                whole = chunk.startIndex == 0 ? chunk : Data(chunk)
                if let expectedLength, expectedLength > whole.count {
                    whole.reserveCapacity(Int(Swift.min(expectedLength, Int64(Self.maxReservation))))
                }
                continue
            }
            whole.append(chunk)
        }
        return whole
    }
}

/// Chunks of a response body that its reader pulls one at a time, for a transport that can hand
/// them over directly (see ``ResponseBody/init(source:expectedLength:)``).
///
/// Each body has its own source, read by one task: ``next()`` is never called concurrently, and
/// runs on the reader's executor. A source whose reader stops early is released without reaching
/// the end: its `deinit` must stop the transfer.
public protocol ResponseBodySource: AnyObject, Sendable {
    /// The next chunk (never empty), or `nil` at the end of the body.
    /// - Throws: The transfer's failure, or `CancellationError` when the reading task is
    ///   cancelled while it waits.
    func next() async throws -> Data?
}
