import CourierTestSupport
import Testing

@testable import Courier

@Suite("Queue slots (state machine, no I/O)")
struct QueueSlotsTests {
    func slots(_ total: Int, perHost: Int? = nil, waiting: Int = 100) -> QueueSlots {
        QueueSlots(limits: RequestQueue.Limits(maxConcurrent: total, maxConcurrentPerHost: perHost, maxWaiting: waiting))
    }

    @Test("waiting calls start highest priority first, oldest first within a priority")
    func priorityOrder() {
        var queue = slots(1)
        do {
            let result = queue.admit(id: 1, host: "a", priority: .normal)
            #expect(result == .start)
        }
        do {
            let result = queue.admit(id: 2, host: "a", priority: .low)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 3, host: "a", priority: .normal)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 4, host: "a", priority: .high)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 5, host: "a", priority: .normal)
            #expect(result == .wait)
        }
        #expect(queue.waitingOrder == [4, 3, 5, 2])
        var order: [UInt64] = []
        for _ in 0..<4 { order += queue.release(host: "a") }
        #expect(order == [4, 3, 5, 2])
        do {
            let result = queue.release(host: "a")
            #expect(result == [])
        }
        #expect(queue.running == 0)
    }

    @Test("a host at its limit does not hold back calls to other hosts")
    func perHostSkip() {
        var queue = slots(3, perHost: 1)
        do {
            let result = queue.admit(id: 1, host: "a", priority: .normal)
            #expect(result == .start)
        }
        do {
            let result = queue.admit(id: 2, host: "a", priority: .high)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 3, host: "b", priority: .low)
            #expect(result == .start)
        }
        #expect(queue.runningByHost == ["a": 1, "b": 1])
        do {
            let result = queue.release(host: "b")
            #expect(result == [])
        }
        do {
            let result = queue.release(host: "a")
            #expect(result == [2])
        }
    }

    @Test("past maxWaiting a call is refused at once", arguments: [0, 1, 5])
    func boundedWaiting(maxWaiting: Int) {
        var queue = slots(1, waiting: maxWaiting)
        do {
            let result = queue.admit(id: 0, host: "a", priority: .normal)
            #expect(result == .start)
        }
        for id in 1...UInt64(maxWaiting + 1) {
            let action = queue.admit(id: id, host: "a", priority: .high)
            #expect(action == (id <= maxWaiting ? .wait : .rejectFull))
        }
        #expect(queue.waitingCount == maxWaiting)
    }

    @Test("a suspended queue starts nothing; resume starts what fits in priority order")
    func suspendResume() {
        var queue = slots(2)
        queue.suspend()
        do {
            let result = queue.admit(id: 1, host: "a", priority: .low)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 2, host: "a", priority: .normal)
            #expect(result == .wait)
        }
        do {
            let result = queue.admit(id: 3, host: "a", priority: .high)
            #expect(result == .wait)
        }
        #expect(queue.running == 0)
        do {
            let result = queue.resume()
            #expect(result == [3, 2])
        }
        do {
            let result = queue.release(host: "a")
            #expect(result == [1])
        }
    }

    @Test("a withdrawn call never starts; withdrawing twice is refused")
    func withdraw() {
        var queue = slots(1)
        _ = queue.admit(id: 1, host: "a", priority: .normal)
        _ = queue.admit(id: 2, host: "a", priority: .normal)
        _ = queue.admit(id: 3, host: "a", priority: .normal)
        do {
            let result = queue.withdraw(id: 2)
            #expect(result)
        }
        do {
            let result = queue.withdraw(id: 2)
            #expect(!result)
        }
        do {
            let result = queue.withdraw(id: 1)
            #expect(!result)
        }
        do {
            let result = queue.release(host: "a")
            #expect(result == [3])
        }
        #expect(queue.waitingCount == 0)
    }

    @Test("random admits, withdrawals and releases never pass a limit", arguments: [1, 2, 3, 42])
    func randomOperations(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var queue = slots(4, perHost: 2, waiting: 50)
        var running: [(UInt64, String)] = []
        var waitingHosts: [UInt64: String] = [:]
        for id in 1...UInt64(2000) {
            let host = ["a", "b", "c"].randomElement(using: &generator) ?? "a"
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                let priority = RequestPriority.allCases.randomElement(using: &generator) ?? .normal
                switch queue.admit(id: id, host: host, priority: priority) {
                case .start: running.append((id, host))
                case .wait: waitingHosts[id] = host
                case .rejectFull: #expect(queue.waitingCount == 50)
                case .rejectLate: Issue.record("fixed limits never shed a call")
                }
            case 1:
                if let victim = waitingHosts.keys.randomElement(using: &generator) {
                    do {
                        let result = queue.withdraw(id: victim)
                        #expect(result)
                    }
                    waitingHosts[victim] = nil
                }
            default:
                guard !running.isEmpty else { continue }
                let (_, doneHost) = running.remove(at: Int.random(in: 0..<running.count, using: &generator))
                for started in queue.release(host: doneHost) {
                    running.append((started, waitingHosts.removeValue(forKey: started) ?? "?"))
                }
            }
            #expect(queue.running == running.count)
            #expect(queue.running <= 4)
            #expect(queue.runningByHost.values.allSatisfy { $0 <= 2 })
            #expect(queue.waitingCount == waitingHosts.count)
        }
    }
}
