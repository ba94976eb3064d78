import Courier
import Testing

@Suite("The manual clock: alarms ring and sleepers wake when it is moved, not before")
struct ManualTimeSourceTests {
    @Test("a sleeper wakes once the clock reaches its instant, in order, and a passed instant returns at once")
    func wakesInOrder() async {
        let clock = ManualTimeSource()
        let start = clock.now
        let woke = Locked<[Int]>([])
        let early = Task {
            let reached = await clock.sleep(until: start + .seconds(1))
            woke.withLock { $0.append(1) }
            return reached
        }
        let late = Task {
            let reached = await clock.sleep(until: start + .seconds(5))
            woke.withLock { $0.append(5) }
            return reached
        }
        await clock.waitForAlarms(2)
        clock.advance(by: .milliseconds(999))
        #expect(clock.pendingAlarms == 2)
        clock.advance(by: .milliseconds(1))
        #expect(await early.value)
        #expect(woke.withLock { $0 } == [1])
        #expect(clock.pendingAlarms == 1)
        clock.advance(by: .seconds(10))
        #expect(await late.value)
        #expect(woke.withLock { $0 } == [1, 5])
        #expect(await clock.sleep(until: start))
        #expect(clock.now == start + .seconds(11))
    }

    @Test("cancelling a sleeper returns false at once and leaves nothing waiting; a negative advance is ignored")
    func cancellation() async {
        let clock = ManualTimeSource()
        let start = clock.now
        let sleeper = Task { await clock.sleep(until: start + .seconds(60)) }
        await clock.waitForAlarms(1)
        sleeper.cancel()
        #expect(await sleeper.value == false)
        #expect(clock.pendingAlarms == 0)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await clock.sleep(until: start + .seconds(60))
        }
        #expect(await cancelledFirst.value == false)
        #expect(clock.pendingAlarms == 0)
        clock.advance(by: .seconds(-5))
        #expect(clock.now == start)
    }

    @Test("the system clock's sleep returns once its instant passed")
    func systemClock() async {
        let clock = SystemTimeSource()
        let target = clock.now + .milliseconds(5)
        #expect(await clock.sleep(until: target))
        #expect(clock.now >= target)
    }

    @Test("an alarm rings exactly once when the clock passes it, and never after it was cancelled")
    func alarms() {
        let clock = ManualTimeSource()
        let rang = Locked<[Int]>([])
        let first = clock.schedule(at: clock.now + .seconds(1)) { rang.withLock { $0.append(1) } }
        let second = clock.schedule(at: clock.now + .seconds(2)) { rang.withLock { $0.append(2) } }
        #expect(clock.pendingAlarms == 2)
        #expect(clock.cancelAlarm(second))
        clock.advance(by: .seconds(5))
        #expect(rang.withLock { $0 } == [1])
        #expect(!clock.cancelAlarm(first))
        _ = clock.schedule(at: clock.now) { rang.withLock { $0.append(3) } }
        #expect(rang.withLock { $0 } == [1, 3])
        #expect(clock.pendingAlarms == 0)
    }
}
