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
                machine.admit(.init(slot: 3, alarm: TimeSourceAlarm(id: 9)), entering: .queued)
                #expect(machine.phase == .queued)
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
        machine.admit(.init(slot: 1, alarm: TimeSourceAlarm(id: 1)), entering: .sending)
        #expect(machine.holdings == nil, "never holds nothing")
        #expect(machine.stage == .running)
    }

    @Test("phase: building until admitted, then what is entered; frozen where the deadline struck")
    func phase() {
        var machine = CallLifecycle()
        #expect(machine.phase == .building)
        machine.admit(.init(slot: 0, alarm: TimeSourceAlarm(id: 1)), entering: .sending)
        #expect(machine.phase == .sending)
        machine.enter(.awaitingResponse)
        _ = machine.pass(byShutdown: false)
        machine.enter(.receiving)
        #expect(machine.phase == .awaitingResponse, "a deadline reports the phase it struck in")
        _ = machine.end()
        machine.enter(.validating)
        #expect(machine.phase == .awaitingResponse)

        var ended = CallLifecycle()
        _ = ended.end()
        ended.enter(.decoding)
        #expect(ended.phase == .decoding, "a call that ended in time moves on while it is reported")
    }
}

/// Something a handler holds, to see whether the handler was dropped.
private final class Held: Sendable {}

/// The call's owner, with no I/O: one end releases what it holds, once; its parts' records and
/// deadlines are the ones the call's pieces need.
@Suite("Running call: the one owner")
struct RunningCallTests {
    @Test("end: releases the place, the alarm and the handlers once, whatever the number of ends")
    func endsOnce() {
        let admission = CallAdmission()
        let clock = ManualTimeSource()
        let call = RunningCall.call(transport: "test", internals: .none, admission: admission, clock: clock)
        guard let slot = admission.enter(call.deadline) else {
            Issue.record("an open client admits the call")
            return
        }
        let alarm = clock.schedule(at: clock.now.advanced(by: .seconds(5))) { call.deadline.pass() }
        call.admit(.init(slot: slot, alarm: alarm), entering: .sending) { $0.bytesSent = 1 }
        let recorder = TransferRecorder(call)
        #expect(recorder.phase == .sending && recorder.metrics.bytesSent == 1 && call.deadline.alarm == alarm)
        weak var held: Held?
        do {
            let strong = Held()
            held = strong
            call.deadline.register { _ = strong }
        }
        #expect(held != nil, "a running call keeps its handlers")
        call.end()
        call.end()
        #expect(held == nil, "the end dropped the handler")
        #expect(!clock.cancelAlarm(alarm), "the end removed the alarm")
        let first = admission.enter(CallDeadline.never)
        let second = admission.enter(CallDeadline.never)
        #expect(first == slot, "the place was left (and is reused)")
        #expect(second != slot, "left once: a second end did not free it again")
        #expect(call.deadline.register({}) == nil, "an ended call keeps no handler")
    }

    @Test("attempt: its own record, the call's deadline, no progress; its end releases nothing of the call's")
    func attempt() {
        let meter = ProgressMeter(reporter: nil, batch: nil, clock: ManualTimeSource())
        let internals = LinkContext.none.forCall(placement: nil, streams: false, progress: meter, transferEnd: nil)
        let admission = CallAdmission()
        let call = RunningCall.call(transport: "test", internals: internals, admission: admission, clock: ManualTimeSource())
        guard let slot = admission.enter(call.deadline) else {
            Issue.record("an open client admits the call")
            return
        }
        call.admit(.init(slot: slot, alarm: TimeSourceAlarm(id: 3)), entering: .sending) { _ in }
        let copy = call.attempt()
        #expect(copy.internals.progress == nil && call.internals.progress != nil)
        TransferRecorder(copy).update(entering: .receiving) { $0.attempts = 3 }
        #expect(TransferRecorder(call).metrics.attempts == 0 && TransferRecorder(call).phase == .sending)
        copy.end()
        #expect(call.deadline.alarm == TimeSourceAlarm(id: 3), "the copy's end left the call's alarm")
        #expect(call.deadline.register({}) != nil, "and the call still running")
        #expect(admission.enter(CallDeadline.never) != slot, "and its place held")
        let ran = Locked(false)
        copy.deadline.register { ran.withLock { $0 = true } }
        call.deadline.pass()
        #expect(ran.withLock { $0 } && copy.deadline.hasPassed, "the copy's waits end at the call's deadline")
    }

    @Test("shared transfer: writes the first caller's record, has no deadline")
    func shared() {
        let call = RunningCall.call(transport: "test", internals: .none, admission: CallAdmission(), clock: ManualTimeSource())
        let transfer = call.sharedTransfer()
        TransferRecorder(transfer).update(entering: .receiving) { $0.attempts = 1 }
        #expect(TransferRecorder(call).metrics.attempts == 1 && TransferRecorder(call).phase == .receiving)
        #expect(transfer.deadline.isNever && transfer.deadline.register({}) == nil)
        call.deadline.pass()
        #expect(!transfer.deadline.hasPassed, "one caller's deadline does not end what the others share")
    }

    @Test("a context made outside a client has no deadline and no internals, whoever's recorder it is given")
    func contextOutsideAClient() {
        let recorder = TransferRecorder(transport: "t")
        let context = RequestContext(requestID: "r", deadline: .now + .seconds(5), recorder: recorder)
        #expect(context.call == recorder.call, "a standalone recorder is used as it is")
        #expect(context.deadlineSignal.isNever && context.deadlineSignal.register({}) == nil)
        #expect(context.internals === LinkContext.none)
        context.recorder.enter(.dns)
        #expect(recorder.phase == .dns)

        let meter = ProgressMeter(reporter: nil, batch: nil, clock: ManualTimeSource())
        let internals = LinkContext.none.forCall(placement: nil, streams: false, progress: meter, transferEnd: nil)
        let call = RunningCall.call(transport: "test", internals: internals, admission: CallAdmission(), clock: ManualTimeSource())
        let borrowed = RequestContext(requestID: "r", deadline: .now + .seconds(5), recorder: TransferRecorder(call))
        #expect(borrowed.deadlineSignal.isNever && borrowed.deadlineSignal.register({}) == nil, "not the call's deadline")
        #expect(borrowed.internals === LinkContext.none, "nor its internals")
        borrowed.recorder.update { $0.attempts = 2 }
        #expect(TransferRecorder(call).metrics.attempts == 2, "only its record")
    }

    @Test("a context whose recorder is replaced keeps its deadline and internals")
    func recorderReplaced() {
        let call = RunningCall.call(transport: "test", internals: .none, admission: CallAdmission(), clock: ManualTimeSource())
        var context = RequestContext(requestID: "r", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "t"))
        context.call = call
        let other = TransferRecorder(transport: "other")
        context.recorder = other
        context.recorder.update { $0.attempts = 4 }
        #expect(other.metrics.attempts == 4 && TransferRecorder(call).metrics.attempts == 0)
        let ran = Locked(false)
        context.deadlineSignal.register { ran.withLock { $0 = true } }
        call.deadline.pass()
        #expect(ran.withLock { $0 }, "the call's deadline still ends its waits")
    }
}
