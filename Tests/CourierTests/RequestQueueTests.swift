import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("Request queue")
struct RequestQueueTests {
    @Test(
        "limits in total and per host are never exceeded",
        arguments: [(total: 5, perHost: 2), (total: 3, perHost: 3), (total: 1, perHost: 1)])
    func limits(total: Int, perHost: Int) async throws {
        let transport = CountingTransport(delay: .milliseconds(3))
        let queue = try RequestQueue(limits: .init(maxConcurrent: total, maxConcurrentPerHost: perHost))
        // The deadline is on a clock that never moves: on a busy machine 60 calls one at a time
        // can take longer than any deadline, and the limits are what this case is about.
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        let hosts = ["https://a.test", "https://b.test", "https://c.test"]
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                group.addTask {
                    let call = QueuedCall(baseURL: hosts[index % 3], path: "n/\(index)", deduplication: .never)
                    return (try? await client.send(call)) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 60 && results.allSatisfy { $0 })
        let counts = transport.snapshot
        #expect(counts.started.count == 60)
        #expect(counts.maxRunning <= total)
        #expect(counts.maxRunningByHost.values.allSatisfy { $0 <= perHost })
        let status = queue.status
        #expect(status.running == 0 && status.waiting == 0 && status.calls == 0 && status.sharedTransfers == 0)
    }

    @Test("waiting calls start by priority, then in arrival order")
    func priority() async throws {
        let transport = CountingTransport(delay: .milliseconds(1))
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1))
        // The calls' deadlines on a clock of the test's own: the calls wait in the suspended queue
        // for as long as a loaded machine takes to start the tasks, and must not time out meanwhile.
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        queue.suspend()
        let order: [(String, RequestPriority)] = [
            ("low1", .low), ("normal1", .normal), ("high1", .high), ("normal2", .normal), ("high2", .high),
        ]
        var tasks: [Task<PathReply, any Error>] = []
        for (index, (name, priority)) in order.enumerated() {
            tasks.append(Task { try await client.send(QueuedCall(path: name, priority: priority)) })
            #expect(await waitUntil { queue.status.waiting == index + 1 })
        }
        queue.resume()
        for task in tasks { _ = try await task.value }
        #expect(transport.snapshot.started == ["/high1", "/high2", "/normal1", "/normal2", "/low1"])
    }

    @Test("past maxWaiting a call fails at once with queue_full and sends nothing")
    func boundedWaiting() async throws {
        let transport = CountingTransport()
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1, maxWaiting: 2))
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        queue.suspend()
        var waiting: [Task<PathReply, any Error>] = []
        for (index, name) in ["w1", "w2"].enumerated() {
            waiting.append(Task { try await client.send(QueuedCall(path: name)) })
            #expect(await waitUntil { queue.status.waiting == index + 1 })
        }
        let error = await expectNetworkError(.queueFull) { try await client.send(QueuedCall(path: "w3")) }
        #expect(error?.phase == .queued)
        #expect(transport.snapshot.started.isEmpty)
        queue.resume()
        for task in waiting { _ = try await task.value }
        #expect(transport.snapshot.started == ["/w1", "/w2"])
    }

    @Test("the time a call waited is in its metrics (fake clock)")
    func queuedTime() async throws {
        let clock = ManualTimeSource()
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1), timeSource: clock)
        let client = try makeQueueClient(CountingTransport(delay: .zero), queue: queue, timeSource: clock)
        queue.suspend()
        let task = Task { try await client.response(for: QueuedCall(path: "slow")) }
        #expect(await waitUntil { queue.status.waiting == 1 })
        clock.advance(by: .seconds(7))
        queue.resume()
        let response = try await task.value
        #expect(response.metrics.queued == .seconds(7))
        let direct = try await client.response(for: QueuedCall(path: "fast"))
        #expect(direct.metrics.queued == .zero)
    }

    @Test("a suspended queue starts nothing new while running calls finish")
    func suspendKeepsRunning() async throws {
        let transport = CountingTransport(delay: .zero, holds: true)
        let queue = try RequestQueue(limits: .init(maxConcurrent: 4))
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        let running = Task { try await client.send(QueuedCall(path: "running")) }
        #expect(await waitUntil { transport.snapshot.running == 1 })
        queue.suspend()
        let held = Task { try await client.send(QueuedCall(path: "held")) }
        #expect(await waitUntil { queue.status.waiting == 1 })
        transport.release()
        _ = try await running.value
        #expect(queue.status.waiting == 1)
        #expect(transport.snapshot.started == ["/running"])
        queue.resume()
        _ = try await held.value
        #expect(transport.snapshot.started == ["/running", "/held"])
    }

    @Test("cancelling a waiting call removes it at once")
    func cancelWaiting() async throws {
        let transport = CountingTransport()
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1))
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        queue.suspend()
        let api = QueuedAPI(client: client, path: "never")
        let result = Locked<Result<PathReply, NetworkError>?>(nil)
        try api.start { outcome in result.withLock { $0 = outcome } }
        #expect(await waitUntil { queue.status.waiting == 1 })
        api.cancel()
        #expect(api.state == .cancelled)
        #expect(await waitUntil { queue.status.waiting == 0 && queue.status.calls == 0 })
        #expect(await waitUntil { result.withLock { $0 } != nil })
        queue.resume()
        try await Task.sleep(for: .milliseconds(20))
        #expect(transport.snapshot.started.isEmpty)
        #expect((try? result.withLock { $0 }?.get()) == nil)
    }

    @Test("a call whose deadline passes while it waits times out in phase queued")
    func timeoutWhileWaiting() async throws {
        let clock = ManualTimeSource()
        let queue = try RequestQueue(limits: .init(maxConcurrent: 1), timeSource: clock)
        let client = try makeQueueClient(CountingTransport(), queue: queue, timeout: .seconds(30), timeSource: clock)
        queue.suspend()
        let call = Task { try await client.send(QueuedCall(path: "late")) }
        #expect(await waitUntil { queue.status.waiting == 1 })
        await clock.waitForAlarms(1)
        clock.advance(by: .seconds(29))
        #expect(queue.status.waiting == 1, "still waiting a second before its deadline")
        clock.advance(by: .seconds(1))
        let error = await expectNetworkError(.timedOut) { try await call.value }
        #expect(error?.phase == .queued)
        #expect(queue.status.waiting == 0)
    }

    @Test("an API object's own queue wins over the client's default queue")
    func ownQueue() async throws {
        let transport = CountingTransport()
        let shared = try RequestQueue(name: "shared")
        let own = try RequestQueue(name: "own")
        let client = try makeQueueClient(transport, queue: shared)
        own.suspend()
        let task = Task { try await client.send(QueuedCall(path: "mine", requestQueue: own)) }
        #expect(await waitUntil { own.status.waiting == 1 })
        #expect(shared.status.calls == 0)
        _ = try await client.send(QueuedCall(path: "default"))
        own.resume()
        _ = try await task.value
        #expect(transport.snapshot.started == ["/default", "/mine"])
    }

    @Test("cancelAll cancels every call of a group, waiting or running, and no other", arguments: ["tag", "team"])
    func groupCancel(by group: String) async throws {
        // Held until cancelled (at most 120 s), and no deadline: the members must still be running
        // or waiting when the group is cancelled, however busy the machine.
        let transport = CountingTransport(holds: true)
        let queue = try RequestQueue(limits: .init(maxConcurrent: 2))
        let client = try makeQueueClient(transport, queue: queue, timeSource: ManualTimeSource())
        func call(_ index: Int, inGroup: Bool) -> QueuedCall {
            var call = QueuedCall(path: "g/\(index)", deduplication: .never)
            if inGroup {
                if group == "tag" { call.tags = ["page-1"] } else { call.team = "search" }
            }
            return call
        }
        let members = (0..<5).map { index in Task { try await client.send(call(index, inGroup: true)) } }
        #expect(await waitUntil { queue.status.calls == 5 && queue.status.running == 2 })
        let other = Task { try await client.send(call(99, inGroup: false)) }
        #expect(await waitUntil { queue.status.calls == 6 })
        let cancelled = queue.cancelAll(group == "tag" ? .tag("page-1") : .team("search"))
        #expect(cancelled == 5)
        for member in members {
            _ = await expectNetworkError(.cancelled) { try await member.value }
        }
        #expect(await waitUntil { queue.status.calls == 1 && queue.status.running == 1 })
        #expect(transport.snapshot.started.last == "/g/99")
        #expect(queue.cancelAll(.all) == 1)
        _ = await expectNetworkError(.cancelled) { try await other.value }
    }

    @Test(
        "out-of-range limits are a configuration error naming the key",
        arguments: [(0, 1, 1, "queue.maxConcurrent"), (1, 0, 1, "queue.maxConcurrentPerHost"), (1, 1, -1, "queue.maxWaiting")])
    func badLimits(total: Int, perHost: Int, waiting: Int, key: String) {
        #expect(throws: ConfigurationError.self) {
            try RequestQueue(limits: .init(maxConcurrent: total, maxConcurrentPerHost: perHost, maxWaiting: waiting))
        }
        do {
            _ = try RequestQueue(limits: .init(maxConcurrent: total, maxConcurrentPerHost: perHost, maxWaiting: waiting))
        } catch {
            #expect(error.key == key)
        }
    }
}
