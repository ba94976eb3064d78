import CourierTestServer
import Testing

@testable import Courier

/// The system clock on a watch of the test's own, so cases do not share the process's timer.
private struct WatchClock: TimeSource {
    let watch = DeadlineWatch()
    var now: ContinuousClock.Instant { ContinuousClock.now }
    func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm {
        watch.schedule(at: instant, action)
    }
    func cancelAlarm(_ alarm: TimeSourceAlarm) -> Bool { watch.cancel(alarm) }
}

@Suite("The shared deadline timer and its heap")
struct DeadlineWatchTests {
    @Test("the heap pops in ascending order", arguments: [0, 1, 2, 7, 64, 1000])
    func heapOrder(count: Int) {
        var generator = SystemRandomNumberGenerator()
        let values = (0..<count).map { _ in Int.random(in: -500...500, using: &generator) }
        var heap = MinHeap<Int>()
        for value in values { heap.push(value) }
        #expect(heap.count == count)
        var popped: [Int] = []
        while let value = heap.popMin() { popped.append(value) }
        #expect(popped == values.sorted())
        #expect(heap.isEmpty && heap.min == nil)
    }

    @Test("a sleeper wakes after its deadline, even one registered after a later deadline")
    func earlierDeadlineReplacesTheTimer() async {
        let watch = WatchClock()
        let start = ContinuousClock.now
        let late = Task { await watch.sleep(until: start + .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(20))  // let the late sleeper register first
        let passed = await watch.sleep(until: ContinuousClock.now + .milliseconds(50))
        let woke = ContinuousClock.now
        #expect(passed)
        #expect(woke >= start + .milliseconds(50))
        #expect(woke < start + .seconds(30))  // not held back by the late sleeper's timer
        late.cancel()
        #expect(await late.value == false)
    }

    @Test("a cancelled sleeper returns false at once, before and after it registered")
    func cancellation() async {
        let watch = WatchClock()
        let far = ContinuousClock.now + .seconds(600)
        let waiting = Task { await watch.sleep(until: far) }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.value == false)

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await watch.sleep(until: far)
        }
        #expect(await early.value == false)
    }

    @Test("thousands of finished sleepers leave nothing behind, and a late one still wakes")
    func churn() async {
        let watch = WatchClock()
        let far = ContinuousClock.now + .seconds(600)
        for _ in 0..<20 {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 { group.addTask { await watch.sleep(until: far) } }
                group.cancelAll()
                for await passed in group { #expect(!passed) }
            }
        }
        #expect(watch.watch.pendingCount.alarms == 0)
        #expect(watch.watch.pendingCount.heap <= 2 * 64 + 1)
        #expect(await watch.sleep(until: ContinuousClock.now + .milliseconds(10)))
        #expect(await watch.sleep(until: ContinuousClock.now - .milliseconds(10)))
    }

    @Test("an alarm rings once after its instant; a cancelled one never rings; a passed instant rings at once")
    func alarms() async {
        let watch = DeadlineWatch()
        let rang = Locked<[String]>([])
        let cancelled = watch.schedule(at: ContinuousClock.now + .milliseconds(20)) { rang.withLock { $0.append("cancelled") } }
        _ = watch.schedule(at: ContinuousClock.now + .milliseconds(30)) { rang.withLock { $0.append("later") } }
        _ = watch.schedule(at: ContinuousClock.now - .milliseconds(1)) { rang.withLock { $0.append("passed") } }
        #expect(rang.withLock { $0 } == ["passed"])
        #expect(watch.cancel(cancelled))
        #expect(await eventually { rang.withLock { $0 } == ["passed", "later"] })
        #expect(!watch.cancel(cancelled))
        #expect(watch.pendingCount.alarms == 0)
    }
}
