import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Batches")
struct BatchTests {
    /// Everything a batch told its callbacks, in order.
    final class Journal: Sendable {
        let events = Locked<[String]>([])
        let finished = Locked<[[Result<PathReply, NetworkError>]]>([])
        func add(_ event: String) { events.withLock { $0.append(event) } }
        func callbacks() -> Batch<PathReply>.Callbacks {
            var callbacks = Batch<PathReply>.Callbacks()
            callbacks.itemStarted = { self.add("started \($0)") }
            callbacks.itemSucceeded = { index, _ in self.add("succeeded \(index)") }
            callbacks.itemFailed = { index, error in self.add("failed \(index) \(error.kind)") }
            callbacks.progress = { self.add("progress \($0.finished)/\($0.total)") }
            return callbacks
        }
        var snapshot: [String] { events.withLock { $0 } }
    }

    func items(_ client: NetworkClient, _ count: Int) -> [BaseAPI<PathReply>] {
        (0..<count).map { QueuedAPI(client: client, path: "item/\($0)") }
    }

    @Test("continue: each item reported once, then the batch once with every result in order")
    func continuePolicy() async throws {
        let transport = CountingTransport(delay: .milliseconds(2)) { $0.hasSuffix("/3") || $0.hasSuffix("/7") }
        let queue = try RequestQueue(limits: .init(maxConcurrent: 3))
        let client = try makeQueueClient(transport, queue: nil)
        let journal = Journal()
        let batch = Batch(items(client, 10), queue: queue)
        batch.callbacks = journal.callbacks()
        try batch.start { results in
            journal.finished.withLock { $0.append(results) }
            journal.add("batch finished")
        }
        #expect(await waitUntil { journal.finished.withLock { $0.count } == 1 })
        try await Task.sleep(for: .milliseconds(20))
        let events = journal.snapshot
        #expect(events.last == "batch finished")
        #expect(events.filter { $0 == "batch finished" }.count == 1)
        for index in 0..<10 {
            let outcome = events.filter { $0 == "succeeded \(index)" || $0.hasPrefix("failed \(index) ") }
            #expect(outcome.count == 1, "item \(index): \(outcome)")
            #expect(events.filter { $0 == "started \(index)" }.count == 1)
        }
        #expect(events.filter { $0.hasPrefix("progress") }.count == 10)
        #expect(events.contains("progress 10/10"))
        let results = try #require(journal.finished.withLock { $0.first })
        #expect(results.count == 10)
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let reply): #expect(reply.path == "/item/\(index)")
            case .failure(let error): #expect([3, 7].contains(index) && error.kind == .connectionClosed)
            }
        }
        #expect(batch.progress.failed == 2)
        #expect(transport.snapshot.maxRunning <= 3)
    }

    @Test("cancel the rest: the first failure cancels every unfinished item, each still reported once")
    func cancelRemaining() async throws {
        // The first request to reach the transport fails at once; every other one is held until
        // cancelled. (Which item that is depends on how the items' tasks are scheduled: under
        // load, item 0 can reach the queue after two others have taken its two slots.)
        let first = Locked<String?>(nil)
        let transport = CountingTransport(delay: .zero, holds: true) { path in
            first.withLock { first in
                if first == nil { first = path }
                return first == path
            }
        }
        let queue = try RequestQueue(limits: .init(maxConcurrent: 2))
        let client = try makeQueueClient(transport, queue: nil)
        let journal = Journal()
        let batch = Batch(items(client, 8), queue: queue, failurePolicy: .cancelRemaining)
        batch.callbacks = journal.callbacks()
        let results = try await batch.run()
        #expect(results.count == 8)
        let kinds = results.map { result -> String in
            switch result {
            case .success: "ok"
            case .failure(let error): error.kind.description
            }
        }
        #expect(kinds.filter { $0 == "connection_closed" }.count == 1, "\(kinds)")
        #expect(kinds.filter { $0 == "cancelled" }.count == 7, "\(kinds)")
        let failedPath = first.withLock { $0 }
        let failedIndex = kinds.firstIndex(of: "connection_closed")
        #expect(failedPath == failedIndex.map { "/item/\($0)" }, "the item that failed is the one the transport failed")
        #expect(transport.snapshot.started.count <= 3, "only the slots' holders ever started")
        #expect(await waitUntil { transport.snapshot.running == 0 })
        try await Task.sleep(for: .milliseconds(20))
        let events = journal.snapshot
        for index in 0..<8 {
            #expect(events.filter { $0 == "succeeded \(index)" || $0.hasPrefix("failed \(index) ") }.count == 1)
        }
        #expect(await waitUntil { queue.status.calls == 0 }, "cancelled calls leave the queue's books once their task ends")
    }

    @Test("cancelling the batch cancels what has not finished; the queue can cancel it by id too", arguments: [false, true])
    func cancelBatch(throughQueue: Bool) async throws {
        let transport = CountingTransport(delay: .seconds(10))
        let queue = try RequestQueue(limits: .init(maxConcurrent: 2))
        let client = try makeQueueClient(transport, queue: nil)
        let batch = Batch(items(client, 6), queue: queue)
        let task = Task { try await batch.run() }
        #expect(await waitUntil { queue.status.running == 2 && queue.status.waiting == 4 })
        if throughQueue {
            #expect(queue.cancelAll(.batch(batch.id)) == 6)
        } else {
            batch.cancel()
        }
        let results = try await task.value
        #expect(results.allSatisfy { (try? $0.get()) == nil })
        #expect(results.allSatisfy { if case .failure(let error) = $0 { error.kind == .cancelled } else { false } })
        #expect(await waitUntil { queue.status.calls == 0 && transport.snapshot.running == 0 })
        #expect(transport.snapshot.started.count == 2)
    }

    @Test("an empty batch finishes at once; a batch starts once")
    func emptyAndSingleUse() async throws {
        let queue = try RequestQueue()
        let batch = Batch<PathReply>([], queue: queue)
        #expect(try await batch.run().isEmpty)
        let error = await expectNetworkError(.alreadyStarted) { try await batch.run() }
        #expect(error != nil)
    }

    @Test("an item started before (single use) fails in the batch without disturbing the others")
    func itemAlreadyStarted() async throws {
        let transport = CountingTransport(delay: .milliseconds(1))
        let client = try makeQueueClient(transport, queue: nil)
        let used = QueuedAPI(client: client, path: "used")
        _ = try await used.response()
        let batch = Batch([used, QueuedAPI(client: client, path: "fresh")], queue: try RequestQueue())
        let results = try await batch.run()
        #expect((try? results[1].get()) == PathReply(path: "/fresh"))
        if case .failure(let error) = results[0] { #expect(error.kind == .alreadyStarted) } else { Issue.record("expected a failure") }
    }

    @Test(
        "the byte total: the items' bytes added up, the expected total once every item announced it, the last report before the completion")
    func byteTotal() async throws {
        let transport = CountingTransport(delay: .milliseconds(1)) { $0.hasSuffix("/fail") }
        let queue = try RequestQueue(limits: .init(maxConcurrent: 2))
        let client = try makeQueueClient(transport, queue: nil)
        for failing in [false, true] {
            let journal = Journal()
            let reports = Locked<[TransferProgress]>([])
            // Two identical items: each counts its own transfer (a batch counting bytes shares none).
            let paths = ["item/0", "item/0", "item/22", failing ? "item/fail" : "item/333"]
            let batch = Batch(
                paths.map { QueuedAPI(client: client, path: $0) }, queue: queue, bytesThrottle: .init(interval: .zero, fraction: 0))
            var callbacks = Batch<PathReply>.Callbacks()
            callbacks.bytes = { update in
                reports.withLock { $0.append(update) }
                if update.isFinished { journal.add("bytes finished") }
            }
            batch.callbacks = callbacks
            try batch.start { _ in journal.add("batch finished") }
            #expect(await waitUntil { journal.snapshot.contains("batch finished") })
            let seen = reports.withLock { $0 }
            let bodies = paths.filter { $0 != "item/fail" }.map { Int64("{\"path\":\"/\($0)\"}".utf8.count) }.reduce(0, +)
            #expect(seen.last?.isFinished == true && seen.filter(\.isFinished).count == 1, "\(seen)")
            #expect(seen.last?.bytesReceived == bodies, "\(seen)")
            // A failed item announces 0: the total is known at the end either way.
            #expect(seen.last?.expectedBytesReceived == bodies, "\(seen)")
            #expect(transport.snapshot.started.filter { $0 == "/item/0" }.count == (failing ? 4 : 2), "\(transport.snapshot.started)")
            #expect(seen.last?.expectedBytesSent == 0 && seen.last?.bytesSent == 0, "\(seen)")
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "\(seen)")
            #expect(journal.snapshot == ["bytes finished", "batch finished"], "\(journal.snapshot)")
        }
    }
}
