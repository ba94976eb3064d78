import Courier
import Testing

@Suite("The manual clock: sleepers wake when it is moved, not before")
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
        await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .milliseconds(1))
        #expect(await early.value)
        #expect(woke.withLock { $0 } == [1])
        #expect(clock.sleeperCount == 1)
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
        await clock.waitForSleepers(1)
        sleeper.cancel()
        #expect(await sleeper.value == false)
        #expect(clock.sleeperCount == 0)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await clock.sleep(until: start + .seconds(60))
        }
        #expect(await cancelledFirst.value == false)
        #expect(clock.sleeperCount == 0)
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
}
