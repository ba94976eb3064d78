import CCurl
import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCurl

/// The curl transfer's state machine alone: real easy handles that never go on a multi handle,
/// real continuations, no network. Each action is performed the way the engine performs it
/// (``StateHarness/settle(_:)``), so every test also counts the attempts released.
@Suite("CurlTransport's transfer state: what each phase holds, and exactly one outcome", .timeLimit(.minutes(1)))
struct CurlTransferStateTests {
    /// Reads `buffer` to its end: the chunks, and the error it ended with.
    private static func readAll(_ buffer: CurlBodyBuffer) async -> (chunks: [Data], error: (any Error)?) {
        var chunks: [Data] = []
        do {
            while let chunk = try await buffer.next() { chunks.append(chunk) }
            return (chunks, nil)
        } catch {
            return (chunks, error)
        }
    }

    private static func append(_ bytes: [UInt8], to buffer: CurlBodyBuffer) -> Bool {
        bytes.withUnsafeBytes { buffer.append($0) } != .full
    }

    @Test("a gathering buffer keeps its reader waiting until the body ends, then hands over what gathered as one chunk, in order")
    func gatheringBuffer() async throws {
        let harness = StateHarness()
        let pieces = (0..<10).map { index in [UInt8](repeating: UInt8(index), count: 50) }
        for ending in [Result<Void, NetworkError>.success(()), .failure(.cancelled(phase: .receiving))] {
            let buffer = harness.gatheringBuffer(remaining: 500)
            // Bytes that gathered before the reader came are not handed over yet either.
            #expect(Self.append(pieces[0], to: buffer))
            let reader = Task { await Self.readAll(buffer) }
            #expect(await eventually { buffer.readerWaits }, "the reader never waited")
            for piece in pieces.dropFirst() { #expect(Self.append(piece, to: buffer)) }
            // The reader is not woken for the bytes, only for the end.
            #expect(buffer.readerWaits)
            buffer.finish(ending)
            let (chunks, error) = await reader.value
            #expect(chunks.count == 1, "gathered into one chunk, not \(chunks.map(\.count))")
            #expect(chunks.first == Data(pieces.joined()))
            #expect((error as? NetworkError)?.kind == (try? ending.get()).map { nil } ?? .cancelled)
        }
        // No high water: the caller holds the whole body anyway (the size limit bounds it), so
        // gathering never pauses the transfer; a body of unknown length grows as it comes.
        let buffer = harness.gatheringBuffer(remaining: 0)
        for _ in 0..<40 { #expect(Self.append([UInt8](repeating: 7, count: 100), to: buffer), "gathering never pauses") }
        let reader = Task { await Self.readAll(buffer) }
        #expect(await eventually { buffer.readerWaits })
        buffer.finish(.success(()))
        let (chunks, _) = await reader.value
        #expect(chunks.map(\.count) == [4000])
        // A dropped body stops gathering.
        let dropped = harness.gatheringBuffer(remaining: 100)
        dropped.consumerWentAway()
        #expect(Self.append([1, 2, 3], to: dropped))
        dropped.finish(.success(()))
    }

    @Test(
        "a streamed buffer hands a round's pieces to its waiting reader as one chunk with one wakeup, at the round's end, and pauses at its high water"
    )
    func streamedBufferRounds() async throws {
        let harness = StateHarness()
        let piece = 16 * 1024
        let pieces = (0..<6).map { index in [UInt8](repeating: UInt8(index), count: piece) }
        let buffer = harness.streamBuffer(highWater: 4 * piece, remaining: 0)
        let reader = Task { await Self.readAll(buffer) }
        #expect(await eventually { buffer.readerWaits }, "the reader never waited")
        // The first piece of a round asks for one wakeup; the others join it.
        let first = pieces[0].withUnsafeBytes { buffer.append($0) }
        #expect(first == .wakeReader)
        for index in 1..<3 { #expect(pieces[index].withUnsafeBytes { buffer.append($0) } == .taken) }
        #expect(buffer.readerWaits, "woken before the round ended")
        buffer.wakeReader()
        // The reader took the round's chunk; a new round fills a new chunk up to the high water.
        #expect(await eventually { buffer.readerWaits })
        #expect(pieces[3].withUnsafeBytes { buffer.append($0) } == .wakeReader)
        #expect(pieces[4].withUnsafeBytes { buffer.append($0) } == .taken)
        #expect(pieces[5].withUnsafeBytes { buffer.append($0) } == .taken)
        #expect([UInt8](repeating: 9, count: piece).withUnsafeBytes { buffer.append($0) } == .taken)
        #expect([UInt8](repeating: 9, count: 1).withUnsafeBytes { buffer.append($0) } == .full, "past the high water")
        buffer.wakeReader()
        // A piece smaller than libcurl's own buffer (the socket ran dry) gets a chunk of its size.
        #expect(await eventually { buffer.readerWaits })
        #expect([UInt8]("tail".utf8).withUnsafeBytes { buffer.append($0) } == .wakeReader)
        buffer.wakeReader()
        #expect(await eventually { buffer.readerWaits })
        buffer.finish(.success(()))
        let (chunks, error) = await reader.value
        #expect(error == nil)
        #expect(chunks.map(\.count) == [3 * piece, 4 * piece, 4])
        var expected = Data(pieces.joined())
        expected.append(Data(repeating: 9, count: piece))
        expected.append(Data("tail".utf8))
        #expect(Data(chunks.joined()) == expected)
        // No reader waiting: nothing to wake; the reader takes the bytes itself. Small pieces
        // (a server sending tiny chunks) join one chunk, not a `Data` each.
        let idle = harness.streamBuffer(highWater: 4 * piece, remaining: 0)
        for text in ["a", "bc", "", "def"] { #expect([UInt8](text.utf8).withUnsafeBytes { idle.append($0) } == .taken) }
        for _ in 0..<1000 { #expect([UInt8](repeating: 1, count: 3).withUnsafeBytes { idle.append($0) } == .taken) }
        idle.finish(.success(()))
        #expect(await Self.readAll(idle).chunks == [Data("abcdef".utf8) + Data(repeating: 1, count: 3000)])
        // The body ends in the round whose bytes a waiting reader was due: it gets them, then the end.
        let ending = harness.streamBuffer(highWater: 4 * piece, remaining: 0)
        let endingReader = Task { await Self.readAll(ending) }
        #expect(await eventually { ending.readerWaits })
        #expect([UInt8]("last".utf8).withUnsafeBytes { ending.append($0) } == .wakeReader)
        ending.finish(.failure(.cancelled(phase: .receiving)))
        ending.wakeReader()
        let (endingChunks, endingError) = await endingReader.value
        #expect(endingChunks == [Data("last".utf8)])
        #expect((endingError as? NetworkError)?.kind == .cancelled)
    }

    @Test("a stop that overtakes the start fails the caller once, at the start, and no attempt is made")
    func stopBeforeStart() async throws {
        let harness = StateHarness()
        let box = StateBox()
        let check1 = harness.settle(box.state.stop(.cancelled(phase: .queued))) == .none
        #expect(check1, "the caller's continuation is not there yet")
        let result = await StateHarness.call { waiter in
            let check2 = harness.settle(box.state.start(waiter, refusal: nil)) == .failed(.cancelled)
            #expect(check2)
        }
        #expect(StateHarness.kind(of: result) == .cancelled)
        let check3 = harness.settle(box.state.stop(.cancelled(phase: .queued))) == .none
        #expect(check3)
        let check4 = harness.settle(box.state.completed(nil, handleFailed: false)) == .none
        #expect(check4)
        #expect(harness.released == 0)
        guard case .finished = box.state else {
            Issue.record("a stopped transfer ends finished, not \(box.state)")
            return
        }
    }

    @Test("a start during shutdown fails the caller at once, with no attempt")
    func refusedStart() async {
        let harness = StateHarness()
        let box = StateBox()
        let result = await StateHarness.call { waiter in
            let check5 = harness.settle(box.state.start(waiter, refusal: CurlEngine.shutDownError)) == .failed(.cancelled)
            #expect(check5)
        }
        #expect(StateHarness.kind(of: result) == .cancelled)
        #expect(harness.released == 0)
    }

    /// The phases a transfer can end in, and the events that end it.
    enum Phase: CaseIterable { case awaitingHead, headReady, streaming }
    enum Ending: CaseIterable { case success, failure, stop }

    @Test(
        "whichever event ends a transfer, in whichever phase: the caller hears once, the attempt leaves the state once, later events do nothing",
        arguments: Phase.allCases, Ending.allCases)
    func oneOutcome(phase: Phase, ending: Ending) async throws {
        let harness = StateHarness()
        let box = StateBox()
        let attempt = try StateHarness.attempt()
        let easy = attempt.easy
        var ended = StateHarness.Outcome.none
        let result = await StateHarness.call { waiter in
            guard harness.begin(&box.state, waiter, attempt) else { return }
            let (attachedEasy, waiting) = (box.state.easy, box.state.callerHasNothing)
            #expect(attachedEasy == easy)
            #expect(waiting)
            if phase != .awaitingHead {
                let check7 = box.state.headArrived(HTTPResponse(status: .ok))
                #expect(check7)
                let check8 = !box.state.headArrived(HTTPResponse(status: .notFound))
                #expect(check8, "a second head is not taken")
                let check9 = box.state.receive(harness.bytes("abc"), earlyLimit: 1024, maxBytes: 1024) == .taken
                #expect(check9)
            }
            if phase == .streaming {
                let check10 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .stream
                #expect(check10)
                let stillWaiting = box.state.callerHasNothing
                #expect(!stillWaiting)
            }
            let error = NetworkError(kind: .connectionClosed, phase: .receiving, message: "cut")
            switch ending {
            case .success: ended = harness.settle(box.state.completed(nil, handleFailed: false))
            case .failure: ended = harness.settle(box.state.completed(error, handleFailed: true))
            case .stop: ended = harness.settle(box.state.stop(.cancelled(phase: .receiving)))
            }
            // A caller still waiting was answered by `ended`; one with the head already was by the flush.
        }
        switch (phase, ending) {
        case (.awaitingHead, .success):
            #expect(ended == .failed(.invalidResponse), "a transfer that ends without a head is an invalid response")
        case (.awaitingHead, .failure), (.headReady, .failure):
            #expect(ended == .failed(.connectionClosed))
        case (.awaitingHead, .stop), (.headReady, .stop):
            #expect(ended == .failed(.cancelled))
        case (.headReady, .success):
            #expect(ended == .whole("abc"), "a body that ended in the head's round is handed over whole")
        case (.streaming, .success):
            #expect(ended == .bodyEnded(nil))
        case (.streaming, .failure):
            #expect(ended == .bodyEnded(.connectionClosed))
        case (.streaming, .stop):
            #expect(ended == .bodyEnded(.cancelled))
        }
        if phase == .streaming || (phase == .headReady && ending == .success) {
            #expect((try? result.get())?.head.status == .ok)
        } else {
            #expect(StateHarness.kind(of: result) != nil)
        }
        #expect(box.phase == .finished)
        #expect(harness.released == 1)
        #expect(harness.releasedFailed == (ending != .success), "a handle libcurl failed, or one taken off mid-transfer, is not reused")
        let easyAfter = box.state.easy
        #expect(easyAfter == nil)
        let check11 = harness.settle(box.state.stop(.cancelled(phase: .receiving))) == .none
        #expect(check11)
        let check12 = harness.settle(box.state.completed(nil, handleFailed: false)) == .none
        #expect(check12)
        #expect(harness.released == 1)
    }

    @Test("an event in a phase it does not belong to changes nothing: the state is never left mid-transition")
    func eventsOutOfPhase() async throws {
        let harness = StateHarness()
        let box = StateBox()
        let check101 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .none
        #expect(check101)
        let early = harness.bytes("x")
        let check102 = box.state.receive(early, earlyLimit: 10, maxBytes: 10) == .taken
        #expect(check102)
        let check103 = box.state.readHeaderLine(harness.bytes("HTTP/1.1 200 OK\r\n")) == nil
        #expect(check103)
        #expect(box.phase == .created)
        let attempt = try StateHarness.attempt()
        let result = await StateHarness.call { waiter in
            guard harness.begin(&box.state, waiter, attempt) else { return }
            // Waiting for the head: no flush, head lines go to the parser.
            let check104 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .none
            #expect(check104)
            #expect(box.phase == .awaitingHead)
            let status = box.state.readHeaderLine(harness.bytes("HTTP/1.1 200 OK\r\n"))
            let field = box.state.readHeaderLine(harness.bytes("Content-Length: 0\r\n"))
            let end = box.state.readHeaderLine(harness.bytes("\r\n"))
            #expect(status == .partial && field == .partial && end == .finalEnd(status: 200))
            #expect(box.phase == .awaitingHead, "the parser found the head; the transfer says so (headArrived)")
            let check105 = box.state.headArrived(HTTPResponse(status: .ok))
            #expect(check105)
            let check106 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .stream
            #expect(check106)
            // Streaming: header lines are trailers, a second flush does nothing.
            let check107 = box.state.readHeaderLine(harness.bytes("X-Trailer: 1\r\n")) == .partial
            #expect(check107)
            let check108 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .none
            #expect(check108)
            #expect(box.phase == .streaming)
            let check109 = harness.settle(box.state.completed(nil, handleFailed: false)) == .bodyEnded(nil)
            #expect(check109)
        }
        #expect((try? result.get()) != nil)
        let check110 = box.state.readHeaderLine(harness.bytes("X: 1\r\n")) == nil
        #expect(check110)
        let check111 = box.state.receive(early, earlyLimit: 10, maxBytes: 10) == .taken
        #expect(check111)
        let check112 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .none
        #expect(check112)
        #expect(box.phase == .finished)
        #expect(harness.released == 1)
    }

    @Test("a resend takes the attempt back while the caller has nothing: a head not handed over is dropped; once streaming, never")
    func resend() async throws {
        let harness = StateHarness()
        let box = StateBox()
        let first = try StateHarness.attempt()
        let second = try StateHarness.attempt()
        let result = await StateHarness.call { waiter in
            guard harness.begin(&box.state, waiter, first) else { return }
            let check13 = box.state.headArrived(HTTPResponse(status: .ok))
            #expect(check13)
            guard let (old, again) = box.state.takeForResend() else {
                Issue.record("a head not handed over yet does not stop a resend")
                _ = harness.settle(box.state.stop(.cancelled(phase: .receiving)))
                return
            }
            harness.release(old)
            let (headLeft, easyLeft) = (box.state.finalHead, box.state.easy)
            #expect(headLeft == nil && easyLeft == nil, "nothing of the first attempt is left")
            let refused = box.state.attached(second, again)
            guard case .none = refused else {
                Issue.record("the state takes the new attempt")
                _ = harness.settle(refused)
                return
            }
            let secondEasy = box.state.easy
            #expect(secondEasy == second.easy)
            let check14 = box.state.headArrived(HTTPResponse(status: .accepted))
            #expect(check14)
            let check15 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .stream
            #expect(check15)
            let check16 = box.state.takeForResend() == nil
            #expect(check16, "the caller has the head")
            _ = harness.settle(box.state.completed(nil, handleFailed: false))
        }
        #expect((try? result.get())?.head.status == .accepted)
        #expect(harness.released == 2)
    }

    /// A final head of `status` arrives, its body announced at `announced` bytes, as the header
    /// callback would record it (the parser's status line, the head, the length).
    static func finalHead(_ state: inout CurlTransferState, _ status: HTTPResponse.Status, announcing announced: Int) {
        _ = state.withAttempt { $0.head.take("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n") }
        _ = state.headArrived(HTTPResponse(status: status))
        state.withAttempt { $0.announcedLength = Int64(announced) }
    }

    @Test("a caller that takes the body whole gets the head with it at the end, however many rounds the body took; a longer one streams")
    func heldWhole() async throws {
        for (announced, holds) in [(6, true), (7, false)] {
            let harness = StateHarness()
            let box = StateBox()
            let attempt = try StateHarness.attempt()
            var ended = StateHarness.Outcome.none
            let result = await StateHarness.call { waiter in
                guard harness.begin(&box.state, waiter, attempt) else { return }
                Self.finalHead(&box.state, .ok, announcing: announced)
                // The head's round: the body has not come yet.
                let first = harness.settle(box.state.flush(holdingWholeUpTo: 6, makeBuffer: harness.buffer))
                #expect(first == (holds ? .none : .stream), "\(announced)")
                #expect(box.state.callerHasNothing == holds)
                // Later rounds bring the body; a held head is still not handed over.
                _ = box.state.receive(harness.bytes("abc"), earlyLimit: .max, maxBytes: 100)
                if holds { #expect(harness.settle(box.state.flush(holdingWholeUpTo: 6, makeBuffer: harness.buffer)) == .none) }
                _ = box.state.receive(harness.bytes("def"), earlyLimit: .max, maxBytes: 100)
                ended = harness.settle(box.state.completed(nil, handleFailed: false))
            }
            #expect(ended == (holds ? .whole("abcdef") : .bodyEnded(nil)), "\(announced)")
            #expect((try? result.get())?.head.status == .ok)
            #expect(harness.released == 1)
        }
    }

    @Test("a held head that fails is handed over first, then its body fails; a redirect's head is not held")
    func heldThenFailed() async throws {
        let harness = StateHarness()
        let box = StateBox()
        let attempt = try StateHarness.attempt()
        var ended = StateHarness.Outcome.none
        let result = await StateHarness.call { waiter in
            guard harness.begin(&box.state, waiter, attempt) else { return }
            Self.finalHead(&box.state, .ok, announcing: 6)
            #expect(harness.settle(box.state.flush(holdingWholeUpTo: 6, makeBuffer: harness.buffer)) == .none)
            #expect(box.state.withAttempt { $0.holdsHead } == true, "held: the request is not sent again below the caller")
            _ = box.state.receive(harness.bytes("abc"), earlyLimit: .max, maxBytes: 100)
            // What the engine does before a stop or a failure reaches a held head: the head first.
            #expect(harness.settle(box.state.flush(holdingWholeUpTo: nil, makeBuffer: harness.buffer)) == .stream)
            #expect(harness.buffers.first?.first == Data("abc".utf8))
            ended = harness.settle(box.state.stop(.cancelled(phase: .receiving)))
        }
        #expect(ended == .bodyEnded(.cancelled))
        #expect((try? result.get())?.head.status == .ok)

        let redirect = StateBox()
        let second = try StateHarness.attempt()
        let moved = await StateHarness.call { waiter in
            guard harness.begin(&redirect.state, waiter, second) else { return }
            Self.finalHead(&redirect.state, .movedPermanently, announcing: 6)
            #expect(harness.settle(redirect.state.flush(holdingWholeUpTo: 6, makeBuffer: harness.buffer)) == .stream)
            _ = harness.settle(redirect.state.completed(nil, handleFailed: false))
        }
        #expect((try? moved.get())?.head.status == .movedPermanently)
    }

    @Test("body bytes: dropped before the final head, held early up to the high water (then paused), aborted over the size limit")
    func earlyBody() async throws {
        let harness = StateHarness()
        let box = StateBox()
        let attempt = try StateHarness.attempt()
        let result = await StateHarness.call { waiter in
            guard harness.begin(&box.state, waiter, attempt) else { return }
            let check17 = box.state.receive(harness.bytes("interim"), earlyLimit: 4, maxBytes: 10) == .taken
            #expect(check17)
            let check18 = box.state.headArrived(HTTPResponse(status: .ok))
            #expect(check18)
            let check19 = box.state.receive(harness.bytes("abcd"), earlyLimit: 4, maxBytes: 10) == .taken
            #expect(check19)
            let check20 = box.state.receive(harness.bytes("efg"), earlyLimit: 4, maxBytes: 10) == .pause
            #expect(check20)
            let check21 = box.state.withAttempt { $0.receivePaused } == true
            #expect(check21)
            let check22 = box.state.withAttempt { $0.pauseMask } == ccurl_pause_receiving
            #expect(check22)
            let check23 = box.state.receive(harness.bytes("12345678"), earlyLimit: 100, maxBytes: 10) == .tooLarge
            #expect(check23)
            // The stream starts with the early bytes and knows libcurl holds more back.
            let check24 = harness.settle(box.state.flush(makeBuffer: harness.buffer)) == .stream
            #expect(check24)
            #expect(harness.buffers.first?.paused == true)
            #expect(harness.buffers.first?.first == Data("abcd".utf8))
            _ = harness.settle(box.state.completed(nil, handleFailed: false))
        }
        #expect((try? result.get()) != nil)
    }

    @Test("trailers after the final head are dropped, never join the head, and are held to the head's byte limit")
    func trailers() async throws {
        let engine = try CurlEngine(configuration: .init())
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:1", path: "/x")
        var limits = ResponseHeadLimits()
        limits.maxBytes = 100
        var context = RequestContext(requestID: "trailers", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "curl"))
        context.responseHeadLimits = limits
        let transfer = CurlTransfer(request: request, body: nil, context: context, version: .http1_1, engine: engine)
        let harness = StateHarness()
        let handle = try #require(CurlHandle.make())
        let result = await StateHarness.call { waiter in
            guard harness.begin(&transfer.state, waiter, CurlAttempt(handle: handle, body: nil, limits: limits)) else { return }
            let check25 = transfer.state.headArrived(HTTPResponse(status: .ok, headerFields: [.contentType: "text/plain"]))
            #expect(check25)
            let line = harness.bytes("X-Checksum: 0123456789abcdef\r\n")
            var taken = 0
            for _ in 0..<10 where transfer.receiveHeader(line) == line.count { taken += 1 }
            #expect(taken == 3, "100 bytes hold three 31-byte trailer lines")
            let check26 = transfer.state.withAttempt { $0.failure?.kind } == .invalidResponse
            #expect(check26)
            let head = transfer.state.finalHead
            #expect(head?.headerFields[.contentType] == "text/plain")
            #expect(head?.headerFields.count == 1)
            _ = harness.settle(transfer.state.completed(nil, handleFailed: false))
        }
        #expect((try? result.get())?.head.headerFields.count == 1)
        await engine.shutdown()
    }

    @Test("a replayable body is read again from its first byte after a rewind; a streamed one cannot be rewound")
    func uploadRewind() {
        var upload = CurlUpload(.data(Data("hello".utf8)))
        var buffer = [UInt8](repeating: 0, count: 3)
        func read() -> String {
            let step = buffer.withUnsafeMutableBytes { upload.read(into: $0, openPump: { _ in fatalError("not streamed") }) }
            guard case .wrote(let count) = step else { return "" }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
        #expect(read() == "hel")
        let rewound = upload.rewind()
        #expect(rewound)
        #expect(read() == "hel")
        #expect(read() == "lo")
        // Rewound past its first chunk and after its end, a body is sent whole again; two
        // uploads of one body read apart.
        let large = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var first = CurlUpload(.data(large))
        var second = CurlUpload(.data(large))
        func readAll(_ upload: inout CurlUpload) -> Data {
            var sent = Data()
            var chunk = [UInt8](repeating: 0, count: 7_000)
            while case .wrote(let count) = chunk.withUnsafeMutableBytes({
                upload.read(into: $0, openPump: { _ in fatalError("not streamed") })
            }) {
                sent.append(contentsOf: chunk[..<count])
            }
            return sent
        }
        #expect(readAll(&first) == large)
        let largeRewound = first.rewind()
        #expect(largeRewound)
        #expect(readAll(&first) == large)
        #expect(readAll(&second) == large)
        // The state moves out and back at every callback: keep it small (905 bytes before the
        // failure and the upload's cursor went out of line).
        #expect(MemoryLayout<CurlTransferState>.size <= 320)
        #expect(MemoryLayout<CurlTransferState.Action>.size <= 320)
        let streamed = RequestBody.stream(AsyncStream<Data> { $0.finish() }, length: nil)
        var stream = CurlUpload(streamed)
        let streamRewound = stream.rewind()
        #expect(!streamRewound)
        var none = CurlUpload(nil)
        let noneRewound = none.rewind()
        #expect(noneRewound)
    }
}

/// A transfer's state alone, in a box so that `#expect` may call its transitions.
final class StateBox: @unchecked Sendable {
    var state = CurlTransferState.created

    /// The case the state is in (``CurlTransferState/Phase/modifying`` would be a transition left
    /// half-way).
    var phase: CurlTransferState.Phase { state.phase }
}

/// Performs a transition's actions as the engine does, without libcurl: an attempt released
/// frees its handle (never on a multi handle), a caller is resumed, a stream buffer forgets its
/// transfer. Counts what it released.
final class StateHarness: @unchecked Sendable {
    /// What an action did.
    enum Outcome: Equatable {
        case none, attach
        case failed(NetworkError.Kind)
        case whole(String)
        case stream
        case bodyEnded(NetworkError.Kind?)
    }

    /// A stream buffer the harness made: what it started with.
    struct MadeBuffer {
        let buffer: CurlBodyBuffer
        let first: Data
        let paused: Bool
    }

    private(set) var released = 0
    private(set) var releasedFailed = false
    private(set) var buffers: [MadeBuffer] = []
    /// The transfer the harness's buffers report to; never given to an engine.
    private var owner: (CurlEngine, CurlTransfer)?

    /// An attempt on a fresh easy handle.
    static func attempt(_ body: RequestBody? = nil) throws -> CurlAttempt {
        CurlAttempt(handle: try #require(CurlHandle.make()), body: body, limits: ResponseHeadLimits())
    }

    /// `text`'s bytes where libcurl's callbacks would have them; freed with the harness.
    func bytes(_ text: String) -> UnsafeRawBufferPointer {
        let pointer = UnsafeMutableRawBufferPointer.allocate(byteCount: text.utf8.count, alignment: 1)
        pointer.copyBytes(from: Array(text.utf8))
        allocated.append(pointer)
        return UnsafeRawBufferPointer(pointer)
    }

    private var allocated: [UnsafeMutableRawBufferPointer] = []

    deinit {
        for pointer in allocated { pointer.deallocate() }
    }

    /// Starts `state` and attaches `attempt`, as the engine does for a new transfer. When the
    /// state refuses, records the issue, answers the caller and releases the attempt.
    func begin(_ state: inout CurlTransferState, _ waiter: CurlHeadWaiter, _ attempt: CurlAttempt) -> Bool {
        let started = state.start(waiter, refusal: nil)
        guard case .attach(let waiter) = started else {
            Issue.record("a fresh transfer asks to be attached, not \(started)")
            _ = settle(started)
            release(attempt)
            return false
        }
        let attached = state.attached(attempt, waiter)
        guard case .none = attached else {
            Issue.record("a started transfer takes its attempt")
            _ = settle(attached)
            return false
        }
        return true
    }

    /// What the caller of `drive`'s continuation got.
    static func call(_ drive: (CurlHeadWaiter) -> Void) async -> Result<TransportResponse, any Error> {
        do {
            return .success(try await withUnsafeThrowingContinuation { drive($0) })
        } catch {
            return .failure(error)
        }
    }

    static func kind(of result: Result<TransportResponse, any Error>) -> NetworkError.Kind? {
        guard case .failure(let error) = result else { return nil }
        return (error as? NetworkError)?.kind
    }

    /// Makes a stream buffer the way the engine does (its transfer is forgotten at once: nothing
    /// here may reach an engine).
    func buffer(_ early: Data, _ paused: Bool, _ announced: Int64?) -> CurlBodyBuffer {
        let buffer = CurlBodyBuffer(highWater: 1024, transfer: placeholder(), first: early, paused: paused)
        buffer.releaseTransfer()
        buffers.append(MadeBuffer(buffer: buffer, first: early, paused: paused))
        return buffer
    }

    /// A streamed buffer with `remaining` bytes announced, its transfer forgotten at once.
    func streamBuffer(highWater: Int, remaining: Int) -> CurlBodyBuffer {
        let buffer = CurlBodyBuffer(highWater: highWater, transfer: placeholder(), remaining: remaining)
        buffer.releaseTransfer()
        return buffer
    }

    /// A gathering stream buffer (a caller that takes the body whole) with `remaining` bytes
    /// announced, its transfer forgotten at once.
    func gatheringBuffer(highWater: Int = 1024, remaining: Int) -> CurlBodyBuffer {
        let buffer = CurlBodyBuffer(highWater: highWater, transfer: placeholder(), remaining: remaining, gathers: true)
        buffer.releaseTransfer()
        return buffer
    }

    /// The one engine the harness's placeholder transfers name: never given a command.
    private static let idleEngine = try? CurlEngine(configuration: .init())

    private func placeholder() -> CurlTransfer {
        if let owner { return owner.1 }
        guard let engine = Self.idleEngine else { fatalError("libcurl cannot start") }
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:1", path: "/")
        let context = RequestContext(requestID: "harness", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "curl"))
        let transfer = CurlTransfer(request: request, body: nil, context: context, version: .http1_1, engine: engine)
        owner = (engine, transfer)
        return transfer
    }

    func release(_ attempt: CurlAttempt) {
        released += 1
        releasedFailed = releasedFailed || attempt.handleFailed
        attempt.handle.release()
        attempt.headerList?.free()
    }

    /// Performs `action`.
    func settle(_ action: CurlTransferState.Action) -> Outcome {
        switch action {
        case .none:
            return .none
        case .attach(let waiter):
            waiter.resume(throwing: NetworkError(kind: .transportFailure, phase: .transfer, message: "the harness attaches nothing"))
            return .attach
        case .failCaller(let waiter, let error, let attempt):
            if let attempt { release(attempt) }
            waiter.resume(throwing: error)
            return .failed(error.kind)
        case .deliverWhole(let waiter, let head, let data, let attempt):
            release(attempt)
            waiter.resume(returning: TransportResponse(head: head, body: ResponseBody(data: data)))
            return .whole(String(decoding: data, as: UTF8.self))
        case .deliverStream(let waiter, let head, _, _):
            waiter.resume(returning: TransportResponse(head: head, body: ResponseBody(data: Data())))
            return .stream
        case .endBody(let buffer, let end, let attempt):
            release(attempt)
            buffer.finish(end)
            if case .failure(let error) = end { return .bodyEnded(error.kind) }
            return .bodyEnded(nil)
        }
    }
}
