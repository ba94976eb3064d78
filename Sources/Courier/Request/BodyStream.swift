import Foundation
import Synchronization

/// A request body produced by an async sequence of chunks (see ``RequestBody/stream(_:length:contentType:)``
/// and ``RequestBody/replayableStream(length:contentType:_:)``).
///
/// One place decides what reading such a body means: a one-shot sequence is handed out once (a
/// second read, for a retry or a redirect, fails instead of sending an empty body), a replayable
/// one is made anew for every read, and every read is checked against the announced length, so a
/// producer that gives more or fewer bytes than it announced fails the call instead of sending a
/// body the server will misread.
public final class BodyStream: Sendable {
    /// The announced length, or `nil` when unknown (HTTP/1.1 then sends the body chunked).
    public let length: Int64?
    /// Whether every read gets the whole body from the start.
    public let isReplayable: Bool
    private let make: @Sendable () -> AsyncThrowingStream<Data, any Error>
    private let taken = Atomic<Bool>(false)

    init(length: Int64?, replayable: Bool, make: @escaping @Sendable () -> AsyncThrowingStream<Data, any Error>) {
        self.length = length
        self.isReplayable = replayable
        self.make = make
    }

    /// The chunks of one read, checked against ``length``; empty chunks are skipped.
    /// - Returns: The chunks; reading them fails with ``NetworkError/Kind/invalidRequest`` when a
    ///   one-shot body is read a second time or the producer breaks its announced length, and with
    ///   whatever the producer throws.
    public func open() -> AsyncThrowingStream<Data, any Error> {
        if !isReplayable, taken.exchange(true, ordering: .acquiringAndReleasing) {
            let error = NetworkError.invalidRequest(
                "a one-shot streamed request body was already read; it cannot be sent again (for a retry or a redirect, use RequestBody.replayableStream)"
            )
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let reader = CheckedChunks(make(), announced: length)
        return AsyncThrowingStream(unfolding: { try await reader.next() })
    }

    /// Counts what one reader takes and holds the producer to its announced length.
    ///
    /// `@unchecked Sendable`: a stream's `unfolding` closure is called by one consumer, one call at
    /// a time.
    private final class CheckedChunks: @unchecked Sendable {
        private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
        private let announced: Int64?
        private var total: Int64 = 0

        init(_ stream: AsyncThrowingStream<Data, any Error>, announced: Int64?) {
            iterator = stream.makeAsyncIterator()
            self.announced = announced
        }

        func next() async throws -> Data? {
            while true {
                guard let chunk = try await iterator.next() else {
                    if let announced, total != announced {
                        throw NetworkError(
                            kind: .invalidRequest, phase: .sending,
                            message: "the streamed request body ended after \(total) bytes, but announced \(announced)")
                    }
                    return nil
                }
                if chunk.isEmpty { continue }
                total += Int64(chunk.count)
                if let announced, total > announced {
                    throw NetworkError(
                        kind: .invalidRequest, phase: .sending,
                        message: "the streamed request body gave more than the \(announced) bytes it announced")
                }
                return chunk
            }
        }
    }
}

extension AsyncSequence where Self: Sendable, Element == Data {
    /// The sequence as a stream read by its consumer's own task: no task and no buffer in between.
    func pulledStream() -> AsyncThrowingStream<Data, any Error> {
        let box = IteratorBox(makeAsyncIterator())
        return AsyncThrowingStream(unfolding: { try await box.next() })
    }
}

/// One iterator of a sequence, for the single consumer of a stream's `unfolding` closure.
private final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable where Iterator.Element == Data {
    private var iterator: Iterator
    init(_ iterator: Iterator) { self.iterator = iterator }
    func next() async throws -> Data? { try await iterator.next() }
}
