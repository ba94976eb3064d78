import Courier
import CourierMock
import CourierTestSupport
import Dispatch
import Foundation
import Testing

@Suite("BaseAPI lifecycle over the mock transport", .timeLimit(.minutes(1)))
struct BaseAPITests {
    @Test("a call completes once with the decoded output, on the chosen queue")
    func completesOnQueue() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 1, name: "Ada")))
        let queue = DispatchQueue(label: "courier.test.completion")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "completion-queue")
        let api = GetUser(client: try makeClient(mock), id: 1, queue: queue)
        let calls = Locked<[String?]>([])
        let results = Locked<[User]>([])
        try api.start { result in
            calls.withLock { $0.append(DispatchQueue.getSpecific(key: key)) }
            if case .success(let user) = result { results.withLock { $0.append(user) } }
        }
        #expect(await eventually { calls.withLock { $0.count } == 1 })
        #expect(calls.withLock { $0 } == ["completion-queue"])
        #expect(results.withLock { $0 } == [User(id: 1, name: "Ada")])
        #expect(api.state == .succeeded)
        #expect(api.metrics?.transport == "mock")
        #expect(api.metrics?.attempts == 1)
        #expect(api.responseHead?.status.code == 200)
        #expect(mock.recordedRequests.map(\.path) == ["/users/1"])
    }

    @Test("a second start is refused with alreadyStarted and does not disturb the first call")
    func secondStart() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 2, name: "Bob"), delay: .milliseconds(20)))
        // The first call waits on a clock that moves only when the test says: it is still in
        // flight when the second start comes, and no deadline passes however busy the machine.
        let clock = ManualTimeSource()
        let api = GetUser(client: try makeClient(mock, timeSource: clock), id: 2)
        let count = Locked(0)
        try api.start { _ in count.withLock { $0 += 1 } }
        do {
            try api.start { _ in count.withLock { $0 += 100 } }
            Issue.record("the second start must throw")
        } catch {
            #expect(error.kind == .alreadyStarted)
        }
        // The call's deadline and the mock's delay are set: the call is waiting out its delay.
        await clock.waitForAlarms(2)
        #expect(api.state == .running)
        clock.advance(by: .milliseconds(20))
        #expect(await eventually { api.state == .succeeded })
        #expect(await eventually { count.withLock { $0 } == 1 })
        #expect(throws: NetworkError.self) { try api.start() }
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("cancel is idempotent before start, and start afterwards is refused")
    func cancelBeforeStart() async throws {
        let mock = MockTransport()
        let api = GetUser(client: try makeClient(mock), id: 3)
        let results = Locked<[NetworkError.Kind]>([])
        api.completion = { result in
            if case .failure(let error) = result { results.withLock { $0.append(error.kind) } }
        }
        api.cancel()
        api.cancel()
        #expect(api.state == .cancelled)
        #expect(await eventually { results.withLock { $0 } == [.cancelled] })
        do {
            try api.start()
            Issue.record("start after cancel must throw")
        } catch {
            #expect(error.kind == .cancelled)
        }
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("cancel while running reports cancelled at once and stops the transfer")
    func cancelRunning() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 4, name: "Cy"), delay: .seconds(30)))
        let api = GetUser(client: try makeClient(mock, timeout: .seconds(60)), id: 4)
        let results = Locked<[NetworkError.Kind]>([])
        try api.start { result in
            if case .failure(let error) = result { results.withLock { $0.append(error.kind) } }
        }
        #expect(await eventually { mock.recordedRequests.count == 1 })
        api.cancel()
        api.cancel()
        #expect(await eventually { results.withLock { $0 } == [.cancelled] })
        #expect(api.state == .cancelled)
    }

    @Test("cancel after completion changes nothing")
    func cancelAfterFinish() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 5, name: "Di")))
        let api = GetUser(client: try makeClient(mock), id: 5)
        let user = try await api.response()
        #expect(user.name == "Di")
        api.cancel()
        #expect(api.state == .succeeded)
    }

    @Test("completion is called exactly once when cancel races completion (1,000 iterations)")
    func cancelRacesCompletion() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 6, name: "Eve")))
        let client = try makeClient(mock)
        let iterations = 1_000
        let counts = Locked([Int](repeating: 0, count: iterations))
        let apis = (0..<iterations).map { GetUser(client: client, id: $0) }
        await withTaskGroup(of: Void.self) { group in
            for (index, api) in apis.enumerated() {
                try? api.start { _ in counts.withLock { $0[index] += 1 } }
                group.addTask { api.cancel() }
            }
        }
        #expect(await eventually { counts.withLock { $0.allSatisfy { $0 >= 1 } } })
        // Every call has reached a final state; give any duplicate delivery time to show up.
        #expect(await eventually { apis.allSatisfy { [.succeeded, .cancelled].contains($0.state) } })
        try await Task.sleep(for: .milliseconds(200))
        let final = counts.withLock { $0 }
        #expect(final.allSatisfy { $0 == 1 }, "counts other than 1: \(final.enumerated().filter { $0.element != 1 }.prefix(5))")
        let states = Set(apis.map(\.state))
        #expect(states.isSubset(of: [.succeeded, .cancelled]))
    }

    @Test("response() honours Task cancellation")
    func asyncCancellation() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 7, name: "Fay"), delay: .seconds(30)))
        let api = GetUser(client: try makeClient(mock, timeout: .seconds(60)), id: 7)
        let task = Task { try await api.response() }
        #expect(await eventually { mock.recordedRequests.count == 1 })
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("must throw")
        } catch let error as NetworkError {
            #expect(error.kind == .cancelled)
        }
        #expect(api.state == .cancelled)
    }

    @Test("response() in an already-cancelled task does not send anything")
    func asyncAlreadyCancelled() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(User(id: 8, name: "Gus")))
        let api = GetUser(client: try makeClient(mock), id: 8)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await api.response()
        }
        await #expect(throws: NetworkError.self) { try await task.value }
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a non-2xx status fails with httpStatus and carries the decoded error body")
    func errorBody() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/:id", .json(Problem(code: "not_found", message: "no such user"), status: 404))
        let api = GetUser(client: try makeClient(mock), id: 9)
        do {
            _ = try await api.response()
            Issue.record("must throw")
        } catch let error as NetworkError {
            #expect(error.kind == .httpStatus)
            #expect(error.status == 404)
            #expect(error.phase == .validating)
            #expect(error.errorBody(as: Problem.self) == Problem(code: "not_found", message: "no such user"))
            #expect(error.request?.url == "https://api.test/users/9")
            #expect(error.metrics?.attempts == 1)
            #expect(error.shortDescription == "http_status")
        }
        #expect(api.state == .failed)
    }
}
