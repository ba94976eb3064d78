import CourierMock
import CourierTestSupport
import Foundation
import Testing

@testable import Courier

/// `RequestQueue.Limits.shedsLateCalls` with fixed limits: a call the queue cannot start before its
/// deadline fails at once in phase `queued`, as a state machine and through the client on a manual
/// clock.
@Suite("Shedding calls that cannot start before their deadline", .timeLimit(.minutes(1)))
struct LateCallSheddingTests {
    static let millisecond: Int64 = 1_000_000

    @Test("fixed limits: a call is shed when the rounds ahead of it, at the host's fastest recent time, pass its deadline")
    func estimate() {
        var slots = QueueSlots(limits: RequestQueue.Limits(maxConcurrent: 10, maxConcurrentPerHost: 2))
        // Nothing is estimated before a call has finished.
        for id in UInt64(1)...2 {
            let action = slots.admit(id: id, host: "a", priority: .normal)
            #expect(action == .start)
        }
        #expect(slots.admit(id: 3, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)
        // Calls of 100 ms and 300 ms: the floor is the faster.
        #expect(slots.release(host: "a", heldNanoseconds: 100 * Self.millisecond) == [3])
        #expect(slots.release(host: "a", heldNanoseconds: 300 * Self.millisecond) == [])
        #expect(slots.admit(id: 4, host: "a", priority: .normal) == .start)
        // Two running. The first round after them may start at any moment: no floor.
        #expect(slots.admit(id: 5, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)
        #expect(slots.admit(id: 6, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)
        // The third waiter needs a second round: at least 100 ms.
        let late = slots.admit(id: 7, host: "a", priority: .normal, remainingNanoseconds: 99 * Self.millisecond)
        #expect(late == .rejectLate(waitAhead: 2, perCallNanoseconds: 100 * Self.millisecond))
        #expect(slots.admit(id: 8, host: "a", priority: .normal, remainingNanoseconds: 100 * Self.millisecond) == .wait)
        // Waiters that leave shorten the line; other hosts have floors of their own.
        for id in UInt64(5)...6 {
            let withdrawn = slots.withdraw(id: id)
            #expect(withdrawn)
        }
        #expect(slots.waitingByHost == ["a": 1])
        #expect(slots.admit(id: 9, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)
        #expect(slots.admit(id: 10, host: "b", priority: .normal, remainingNanoseconds: 1) == .start)
    }

    @Test("the floor follows a host that got slower for good, after two windows of 100 calls")
    func floorFollows() {
        var fastest = FastestHold()
        #expect(fastest.nanoseconds == nil)
        fastest.record(100)
        for _ in 0..<99 { fastest.record(300) }
        #expect(fastest.nanoseconds == 100)
        for _ in 0..<99 { fastest.record(300) }
        #expect(fastest.nanoseconds == 100, "the window before still counts")
        fastest.record(300)
        #expect(fastest.nanoseconds == 300)
    }

    @Test("with shedsLateCalls off, or while the queue is suspended, a call waits")
    func off() {
        var limits = RequestQueue.Limits(maxConcurrent: 1)
        limits.shedsLateCalls = false
        var slots = QueueSlots(limits: limits)
        _ = slots.admit(id: 1, host: "a", priority: .normal)
        _ = slots.release(host: "a", heldNanoseconds: 100 * Self.millisecond)
        _ = slots.admit(id: 2, host: "a", priority: .normal)
        #expect(slots.admit(id: 3, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)

        var suspended = QueueSlots(limits: RequestQueue.Limits(maxConcurrent: 1))
        _ = suspended.admit(id: 1, host: "a", priority: .normal)
        _ = suspended.release(host: "a", heldNanoseconds: 100 * Self.millisecond)
        suspended.suspend()
        #expect(suspended.admit(id: 2, host: "a", priority: .normal, remainingNanoseconds: 1) == .wait)
    }

    struct Call: Endpoint {
        typealias Output = Data
        var path: String { "x" }
        var timeout: Duration?
    }

    @Test("through the client: a call that cannot start in time fails at once as queue_full in phase queued; one that can waits")
    func throughTheClient() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("ok", delay: .milliseconds(100)))
        let clock = ManualTimeSource()
        var limits = RequestQueue.Limits(maxConcurrent: 1)
        limits.deduplicates = false  // the same GET would join the running transfer instead of waiting
        let queue = try RequestQueue(name: "late", limits: limits, timeSource: clock)
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        let client = try NetworkClient(configuration: configuration, transport: mock, queue: queue)
        // One call of 100 ms teaches the queue the host's time.
        let first = Task { try await client.send(Call()) }
        await clock.waitForAlarms(2)  // the deadline and the mock's 100 ms
        clock.advance(by: .milliseconds(100))
        _ = try await first.value

        let running = Task { try await client.send(Call()) }
        await clock.waitForAlarms(2)
        let waiting = Task { try await client.send(Call(timeout: .seconds(1))) }
        await clock.waitForAlarms(3)  // its deadline too: it waits in the queue
        #expect(queue.status.waitingByHost["api.test"] == 1)
        // Behind the running call and the waiting one: at least one more call of 100 ms.
        let error = await expectNetworkError(.queueFull) { try await client.send(Call(timeout: .milliseconds(50))) }
        #expect(error?.phase == .queued)
        #expect(error?.metrics?.attempts == 0)
        #expect(error?.message.contains("1 calls wait for api.test ahead of it") == true, "\(String(describing: error))")
        clock.advance(by: .milliseconds(100))
        _ = try await running.value
        await clock.waitForAlarms(2)
        clock.advance(by: .milliseconds(100))
        _ = try await waiting.value
        await client.shutdown()
    }

    @Test("the configuration file and its key check know queue.shedsLateCalls")
    func configurationFile() throws {
        #expect(try loadConfiguration(#"{"queue": {"shedsLateCalls": false}}"#).queue?.shedsLateCalls == false)
        #expect(try loadConfiguration(#"{"queue": {"maxConcurrent": 4}}"#).queue?.shedsLateCalls == true)
    }
}
