import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Call sequences")
struct CallSequenceTests {
    struct Step: Endpoint {
        typealias Output = PathReply
        var path: String
    }

    final class StepAPI: BaseAPI<PathReply>, @unchecked Sendable {
        let name: String
        init(client: NetworkClient, path: String) {
            name = path
            super.init(client: client)
        }
        override var path: String { name }
    }

    @Test("each step is built from the previous output, with a callback per step")
    func success() async throws {
        let transport = CountingTransport(delay: .zero)
        let client = try makeQueueClient(transport, queue: nil)
        let steps = Locked<[String]>([])
        let sequence = CallSequence("first", Step(path: "a"))
            .then("second") { previous in Step(path: previous.path + "/b") }
            .then("third", api: { previous in StepAPI(client: client, path: previous.path + "/c") })
        #expect(sequence.stepNames == ["first", "second", "third"])
        let output = try await sequence.run(on: client) { step, result in
            steps.withLock { $0.append("\(step) \((try? result.get()) != nil)") }
        }
        #expect(output == PathReply(path: "/a/b/c"))
        #expect(transport.snapshot.started == ["/a", "/a/b", "/a/b/c"])
        #expect(steps.withLock { $0 } == ["0 (first) true", "1 (second) true", "2 (third) true"])
        _ = try await sequence.run(on: client)
        #expect(transport.snapshot.started.count == 6, "a sequence can run again")
    }

    @Test("a failing step stops the sequence and the error names it")
    func failure() async throws {
        let transport = CountingTransport(delay: .zero) { $0.hasSuffix("/b") }
        let client = try makeQueueClient(transport, queue: nil)
        let sequence = CallSequence("first", Step(path: "a"))
            .then("second") { _ in Step(path: "b") }
            .then("third") { _ in Step(path: "c") }
        let error = await expectNetworkError(.connectionClosed) { try await sequence.run(on: client) }
        #expect(error?.sequenceStep == CallSequenceStep(index: 1, name: "second"))
        #expect(error?.description.contains("in sequence step 1 (second)") == true)
        #expect(transport.snapshot.started == ["/a", "/b"])
    }

    @Test("a builder that throws fails its step as invalid_request and sends nothing more")
    func builderThrows() async throws {
        struct NoToken: Error {}
        let transport = CountingTransport(delay: .zero)
        let client = try makeQueueClient(transport, queue: nil)
        let sequence = CallSequence("first", Step(path: "a")).then("second") { _ -> Step in throw NoToken() }
        let error = await expectNetworkError(.invalidRequest) { try await sequence.run(on: client) }
        #expect(error?.sequenceStep?.index == 1)
        #expect(error?.underlying is NoToken)
        #expect(transport.snapshot.started == ["/a"])
    }

    @Test("the completion-handler form delivers once; its handle cancels the running step")
    func completionAndCancel() async throws {
        let transport = CountingTransport(delay: .seconds(10))
        let client = try makeQueueClient(transport, queue: nil)
        let results = Locked<[Result<PathReply, NetworkError>]>([])
        let sequence = CallSequence("slow", Step(path: "slow")).then("never") { _ in Step(path: "never") }
        let handle = sequence.start(on: client) { result in results.withLock { $0.append(result) } }
        #expect(await waitUntil { transport.snapshot.running == 1 })
        handle.cancel()
        #expect(await waitUntil { results.withLock { $0.count } == 1 })
        try await Task.sleep(for: .milliseconds(20))
        let only = try #require(results.withLock { $0.first })
        if case .failure(let error) = only {
            #expect(error.kind == .cancelled)
            #expect(error.sequenceStep?.index == 0)
        } else {
            Issue.record("expected cancelled")
        }
        #expect(results.withLock { $0.count } == 1)
        #expect(transport.snapshot.started == ["/slow"])
    }
}
