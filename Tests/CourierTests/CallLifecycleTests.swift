import Testing

@testable import Courier

/// The call's life as a value machine, with no I/O: every transition and what it returns.
@Suite("Call lifecycle: running, passed, ended, once")
struct CallLifecycleTests {
    /// A handler that counts its runs.
    final class Runs: @unchecked Sendable {
        var count = 0
        var handler: CallLifecycle.Handler { CallLifecycle.Handler(run: { self.count += 1 }) }
    }

    @Test("running: handlers are kept under fresh tokens and removed by them")
    func running() {
        var machine = CallLifecycle()
        let runs = Runs()
        #expect(machine.stage == .running && !machine.hasPassed && !machine.passedByShutdown)
        guard case .kept(let first) = machine.register(runs.handler), case .kept(let second) = machine.register(runs.handler),
            case .kept(let third) = machine.register(runs.handler)
        else {
            Issue.record("a running call keeps its handlers")
            return
        }
        #expect(Set([first, second, third]).count == 3)
        #expect(machine.remove(second) != nil)
        #expect(machine.remove(second) == nil, "a token removes once")
        let handlers = machine.pass(byShutdown: false)
        #expect(handlers.count == 2, "the removed handler does not run")
    }

    @Test("pass: once, returning the handlers; later waits run at once; a second pass returns none")
    func pass() {
        var machine = CallLifecycle()
        let runs = Runs()
        _ = machine.register(runs.handler)
        let handlers = machine.pass(byShutdown: false)
        for handler in handlers.all { handler.run() }
        #expect(runs.count == 1)
        #expect(machine.stage == .passed(byShutdown: false) && machine.hasPassed && !machine.passedByShutdown)
        #expect(machine.register(runs.handler) == .runNow)
        #expect(machine.pass(byShutdown: true).count == 0, "the first pass decides how it passed")
        #expect(!machine.passedByShutdown)
    }

    @Test("end: once, from running or passed; nothing is kept or run afterwards; the deadline's report stays")
    func end() {
        for passesFirst in [false, true] {
            for byShutdown in [false, true] {
                var machine = CallLifecycle()
                let runs = Runs()
                _ = machine.register(runs.handler)
                if passesFirst { _ = machine.pass(byShutdown: byShutdown) }
                machine.admit(.init(slot: 3, alarm: TimeSourceAlarm(id: 9)))
                #expect(machine.alarm == TimeSourceAlarm(id: 9))
                let released = machine.end()
                #expect(released?.handlers.count == (passesFirst ? 0 : 1), "the first end releases (and drops what is left)")
                #expect(released?.holdings == .init(slot: 3, alarm: TimeSourceAlarm(id: 9)), "and names what the call held")
                #expect(machine.alarm == nil)
                #expect(machine.end() == nil, "a second end releases nothing")
                #expect(machine.stage == .ended(passed: passesFirst, byShutdown: passesFirst && byShutdown))
                #expect(machine.hasPassed == passesFirst)
                #expect(machine.passedByShutdown == (passesFirst && byShutdown))
                #expect(machine.register(runs.handler) == .dropped)
                #expect(machine.pass(byShutdown: false).count == 0, "an ended call's deadline does not pass")
                #expect(machine.hasPassed == passesFirst)
                #expect(runs.count == 0)
            }
        }
    }

    @Test("never: keeps nothing, never passes, never ends")
    func never() {
        var machine = CallLifecycle()
        machine.isNever = true
        let runs = Runs()
        #expect(machine.register(runs.handler) == .dropped)
        #expect(machine.pass(byShutdown: false).count == 0)
        #expect(!machine.hasPassed)
        #expect(machine.end() == nil)
        machine.admit(.init(slot: 1, alarm: TimeSourceAlarm(id: 1)))
        #expect(machine.holdings == nil, "never holds nothing")
        #expect(machine.stage == .running)
    }

    @Test("a call's deadline says 'first' to one end only (what CallScope.end releases the call on); never's to none")
    func deadlineEndsOnce() async throws {
        let recorder = TransferRecorder(transport: "test")
        let signal = CallDeadline(recordedBy: recorder)
        signal.admit(.init(slot: 7, alarm: TimeSourceAlarm(id: 5)), entering: .sending) { $0.bytesSent = 1 }
        #expect(recorder.phase == .sending && recorder.metrics.bytesSent == 1 && signal.alarm == TimeSourceAlarm(id: 5))
        #expect(signal.end() == .some(.init(slot: 7, alarm: TimeSourceAlarm(id: 5))))
        #expect(signal.end() == nil)
        #expect(CallDeadline.never.end() == nil)
        #expect(CallDeadline.never.isNever && !signal.isNever)
        #expect(CallDeadline.never.register({}) == nil)
    }
}
