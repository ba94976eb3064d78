import Foundation

/// A response body as it arrives: chunks of bytes, read once, in order.
///
/// Transports create it either from bytes already in memory (``init(data:)``) or from a stream
/// they feed as data arrives (``init(stream:expectedLength:)``). When the consumer stops reading
/// (for example because the call was cancelled), the stream terminates and the transport must stop
/// the transfer from the stream's `onTermination` handler.
public struct ResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    enum Storage: Sendable {
        case buffered(Data)
        case stream(AsyncThrowingStream<Data, any Error>)
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
        storage = .stream(stream)
        self.expectedLength = expectedLength
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var buffered: Data?
        var streamIterator: AsyncThrowingStream<Data, any Error>.AsyncIterator?

        /// The next chunk, or `nil` at the end.
        /// - Throws: `CancellationError` when the reading task is cancelled: a stream ends quietly
        ///   on cancellation, and a cut-off body must never pass for a complete one.
        public mutating func next() async throws -> Data? {
            if let data = buffered {
                buffered = nil
                return data.isEmpty ? nil : data
            }
            let chunk = try await streamIterator?.next(isolation: #isolation)
            if chunk == nil, Task.isCancelled { throw CancellationError() }
            return chunk
        }
    }

    /// Makes the iterator; a body can be iterated once.
    public func makeAsyncIterator() -> AsyncIterator {
        switch storage {
        case .buffered(let data): AsyncIterator(buffered: data, streamIterator: nil)
        case .stream(let stream): AsyncIterator(buffered: nil, streamIterator: stream.makeAsyncIterator())
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
        var whole = Data()
        if let expectedLength, expectedLength > 0 { whole.reserveCapacity(Int(expectedLength)) }
        for try await chunk in self {
            guard whole.count + chunk.count <= limit else { throw NetworkError.responseTooLarge(limit: limit, announced: nil) }
            whole.append(chunk)
        }
        return whole
    }
}
