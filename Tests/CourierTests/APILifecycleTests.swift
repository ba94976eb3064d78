import Testing

@testable import Courier

/// The lifecycle machine alone: no I/O, no tasks.
@Suite("API lifecycle state machine")
struct APILifecycleTests {
    typealias Machine = APILifecycle<Int>

    @Test("start works once, then is refused")
    func startOnce() {
        var machine = Machine()
        guard case .launch = machine.start() else {
            Issue.record("first start must launch")
            return
        }
        guard case .rejectAlreadyStarted = machine.start() else {
            Issue.record("second start must be refused")
            return
        }
        #expect(machine.finish(succeeded: true) == .deliver)
        guard case .rejectAlreadyStarted = machine.start() else {
            Issue.record("start after finish must be refused")
            return
        }
    }

    @Test("cancel before start reports once and forbids start")
    func cancelBeforeStart() {
        var machine = Machine()
        guard case .reportCancelled(cancelling: nil) = machine.cancel() else {
            Issue.record("must report")
            return
        }
        guard case .none = machine.cancel() else {
            Issue.record("second cancel must do nothing")
            return
        }
        guard case .rejectCancelled = machine.start() else {
            Issue.record("start after cancel must be refused")
            return
        }
    }

    @Test("cancel while running cancels the attached handle")
    func cancelRunning() {
        var machine = Machine()
        _ = machine.start()
        guard case .none = machine.attach(7) else {
            Issue.record("attach while running")
            return
        }
        guard case .reportCancelled(cancelling: 7) = machine.cancel() else {
            Issue.record("must cancel handle 7")
            return
        }
        #expect(machine.finish(succeeded: true) == .drop)
        guard case .none = machine.cancel() else {
            Issue.record("cancel after cancel does nothing")
            return
        }
    }

    @Test("cancel between launch and attach cancels the handle when it is attached")
    func cancelBeforeAttach() {
        var machine = Machine()
        _ = machine.start()
        guard case .reportCancelled(cancelling: nil) = machine.cancel() else {
            Issue.record("must report")
            return
        }
        guard case .cancel(9) = machine.attach(9) else {
            Issue.record("late attach must be cancelled")
            return
        }
    }

    @Test("finish delivers once; cancel after finish does nothing", arguments: [true, false])
    func finishThenCancel(succeeded: Bool) {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.finish(succeeded: succeeded) == .deliver)
        #expect(machine.finish(succeeded: succeeded) == .drop)
        guard case .none = machine.cancel() else {
            Issue.record("cancel after finish does nothing")
            return
        }
        guard case .finished(let outcome) = machine.state else {
            Issue.record("must be finished")
            return
        }
        #expect(outcome == (succeeded ? .succeeded : .failed))
    }

    @Test("finish before start is dropped")
    func finishIdle() {
        var machine = Machine()
        #expect(machine.finish(succeeded: true) == .drop)
        guard case .idle = machine.state else {
            Issue.record("must stay idle")
            return
        }
    }
}
