import Testing

@testable import Courier

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
        let watch = DeadlineWatch()
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
        let watch = DeadlineWatch()
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
        let watch = DeadlineWatch()
        let far = ContinuousClock.now + .seconds(600)
        for _ in 0..<20 {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 { group.addTask { await watch.sleep(until: far) } }
                group.cancelAll()
                for await passed in group { #expect(!passed) }
            }
        }
        #expect(watch.pendingCount.sleepers == 0)
        #expect(watch.pendingCount.heap <= 2 * 64 + 1)
        #expect(await watch.sleep(until: ContinuousClock.now + .milliseconds(10)))
        #expect(await watch.sleep(until: ContinuousClock.now - .milliseconds(10)))
    }
}
