import Courier
import Foundation
import Testing

@Suite("ResponseBody(source:): a body pulled straight from the transport")
struct ResponseBodySourceTests {
    /// Hands out its chunks, then the end or a failure; counts its releases.
    final class Chunks: ResponseBodySource {
        let remaining: Locked<[Data]>
        let failure: NetworkError?
        let released: Locked<Int>

        init(_ chunks: [String], failure: NetworkError? = nil, released: Locked<Int>) {
            remaining = Locked(chunks.map { Data($0.utf8) })
            self.failure = failure
            self.released = released
        }

        func next() async throws -> Data? {
            if let chunk = remaining.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return chunk }
            if let failure { throw failure }
            return nil
        }

        deinit { released.withLock { $0 += 1 } }
    }

    @Test("the chunks arrive in order, then the end; collect joins them and the source is released")
    func readsToTheEnd() async throws {
        let released = Locked(0)
        var body: ResponseBody? = ResponseBody(source: Chunks(["ab", "cd", "e"], released: released), expectedLength: 5)
        #expect(body?.expectedLength == 5)
        let whole = try await body?.collect(upTo: 100)
        #expect(whole == Data("abcde".utf8))
        body = nil
        #expect(released.withLock { $0 } == 1)
    }

    @Test("collect starts the body at index 0 when the first chunk is a slice, and a lone chunk comes back whole")
    func collectFromSlices() async throws {
        let bytes = Data("xabcd".utf8)
        let slice = bytes[1...]
        #expect(slice.startIndex == 1)
        let stream = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(slice)
            continuation.yield(Data("ef".utf8))
            continuation.finish()
        }
        let whole = try await ResponseBody(stream: stream, expectedLength: 6).collect(upTo: 100)
        #expect(whole == Data("abcdef".utf8) && whole.startIndex == 0)
        #expect(whole[0] == UInt8(ascii: "a"))
        let single = try await ResponseBody(source: Chunks(["only"], released: Locked(0)), expectedLength: nil).collect(upTo: 100)
        #expect(single == Data("only".utf8) && single.startIndex == 0)
    }

    @Test("the limit holds for a pulled body, and the source's failure reaches the reader")
    func limitAndFailure() async throws {
        let released = Locked(0)
        let big = ResponseBody(source: Chunks(["12345", "67890"], released: released), expectedLength: nil)
        let tooLarge = await #expect(throws: NetworkError.self) { try await big.collect(upTo: 8) }
        #expect(tooLarge?.kind == .responseTooLarge)
        let failing = ResponseBody(
            source: Chunks(["x"], failure: NetworkError(kind: .connectionClosed, phase: .receiving, message: "reset"), released: released),
            expectedLength: nil)
        let error = await #expect(throws: NetworkError.self) { try await failing.collect(upTo: 100) }
        #expect(error?.kind == .connectionClosed)
    }

    @Test("a reader that stops early releases the source (which stops the transfer)")
    func earlyStopReleases() async throws {
        let released = Locked(0)
        do {
            let body = ResponseBody(source: Chunks(["a", "b", "c"], released: released), expectedLength: nil)
            var iterator = body.makeAsyncIterator()
            #expect(try await iterator.next() == Data("a".utf8))
        }
        #expect(released.withLock { $0 } == 1)
    }
}
