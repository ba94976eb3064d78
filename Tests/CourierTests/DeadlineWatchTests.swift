import CourierTestSupport
import Testing

@testable import Courier

/// The system clock on a watch of the test's own, so cases do not share the process's timer.
private struct WatchClock: TimeSource {
    let watch = DeadlineWatch()
    var now: ContinuousClock.Instant { ContinuousClock.now }
    func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> TimeSourceAlarm {
        watch.schedule(at: Moment(instant), action)
    }
    func cancelAlarm(_ alarm: TimeSourceAlarm) -> Bool { watch.cancel(alarm) }
}

@Suite("The shared deadline timer and its alarm table")
struct DeadlineWatchTests {
    @Test("the table rings what is due, earliest first and in the order added for one instant; removed and stale ids do nothing")
    func alarmTable() {
        let start = Moment.now()
        let rang = Locked<[Int]>([])
        var table = AlarmTable()
        func add(_ label: Int, at offset: Int) -> UInt64 {
            table.add(at: start.advanced(by: .seconds(offset))) { rang.withLock { $0.append(label) } }
        }
        let five = add(5, at: 5)
        _ = add(3, at: 3)
        let removed = add(0, at: 1)
        _ = add(31, at: 3)
        _ = add(9, at: 9)
        #expect(table.count == 5)
        let removedOnce = table.remove(removed)
        let removedTwice = table.remove(removed)
        let removedZero = table.remove(0)
        #expect(removedOnce && !removedTwice && !removedZero)
        #expect(table.earliest() == start.advanced(by: .seconds(3)))
        for action in table.takeDue(at: start.advanced(by: .seconds(5))) { action() }
        #expect(rang.withLock { $0 } == [3, 31, 5])
        #expect(table.count == 1)
        // A freed slot is reused, and the old id does not remove the new alarm.
        let reused = add(7, at: 7)
        let staleRemoved = table.remove(five)
        #expect(!staleRemoved)
        #expect(table.count == 2)
        #expect(table.capacity == 5)
        #expect(table.earliest() == start.advanced(by: .seconds(7)))
        for action in table.takeDue(at: start.advanced(by: .seconds(60))) { action() }
        #expect(rang.withLock { $0 } == [3, 31, 5, 7, 9])
        let rungRemoved = table.remove(reused)
        #expect(!rungRemoved)
        #expect(table.count == 0 && table.earliest() == nil)
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
        #expect(watch.watch.pendingCount.slots <= 200)  // never more than were waiting at once
        #expect(await watch.sleep(until: ContinuousClock.now + .milliseconds(10)))
        #expect(await watch.sleep(until: ContinuousClock.now - .milliseconds(10)))
    }

    @Test("an alarm rings once after its instant; a cancelled one never rings; a passed instant rings at once")
    func alarms() async {
        let watch = DeadlineWatch()
        let rang = Locked<[String]>([])
        let cancelled = watch.schedule(at: Moment.now().advanced(by: .milliseconds(20))) { rang.withLock { $0.append("cancelled") } }
        _ = watch.schedule(at: Moment.now().advanced(by: .milliseconds(30))) { rang.withLock { $0.append("later") } }
        _ = watch.schedule(at: Moment.now().advanced(by: .milliseconds(-1))) { rang.withLock { $0.append("passed") } }
        #expect(rang.withLock { $0 } == ["passed"])
        #expect(watch.cancel(cancelled))
        #expect(await eventually { rang.withLock { $0 } == ["passed", "later"] })
        #expect(!watch.cancel(cancelled))
        #expect(watch.pendingCount.alarms == 0)
    }
}

@Suite("A call's deadline as a cancellation source")
struct CallDeadlineTests {
    @Test("handlers beyond the two held inline run too; a removed one does not; after finish nothing is kept or run")
    func handlers() {
        let ran = Locked<[Int]>([])
        let deadline = RunningCall.make(transport: "test", internals: .none, deadline: .own).deadline
        let tokens = (0..<5).map { label in deadline.register { ran.withLock { $0.append(label) } } }
        deadline.remove(tokens[0])  // an inline slot
        deadline.remove(tokens[3])  // one in the overflow
        let reused = deadline.register { ran.withLock { $0.append(5) } }  // into the freed inline slot
        #expect(reused != nil && !tokens.contains(reused))
        deadline.pass()
        #expect(ran.withLock { $0.sorted() } == [1, 2, 4, 5])
        deadline.pass()
        #expect(ran.withLock { $0.count } == 4, "a deadline passes once")
        // Registered after it passed: runs at once.
        #expect(deadline.register { ran.withLock { $0.append(6) } } == nil)
        #expect(ran.withLock { $0.last } == 6)

        let call = RunningCall.make(transport: "test", internals: .none, deadline: .own)
        let finished = call.deadline
        _ = finished.register { ran.withLock { $0.append(7) } }
        call.end()
        #expect(finished.register { ran.withLock { $0.append(8) } } == nil)
        finished.pass()
        #expect(!ran.withLock { $0.contains(7) || $0.contains(8) })
        #expect(finished.register({}) == nil, "an ended call keeps no handler")
    }
}
