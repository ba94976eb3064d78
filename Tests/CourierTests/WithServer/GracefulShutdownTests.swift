import Courier
import CourierMock
import CourierServiceLifecycle
import CourierTestServer
import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@Suite("Graceful shutdown: NetworkClient.shutdown(gracePeriod:) and NetworkClientService")
struct GracefulShutdownTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path: String
    }

    static func client(_ mock: MockTransport, clock: ManualTimeSource) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        configuration.requestTimeout = .seconds(600)
        return try NetworkClient(configuration: configuration, transport: mock)
    }

    /// A client on a manual clock whose `/slow` answers `text` after `delay`.
    static func slowClient(answering text: String, after delay: Duration) throws -> (MockTransport, ManualTimeSource, NetworkClient) {
        let mock = MockTransport()
        mock.stub(.get, "/slow", .text(text, delay: delay))
        let clock = ManualTimeSource()
        return (mock, clock, try client(mock, clock: clock))
    }

    @Test("a running call finishes; a call made after the shutdown began is refused as shut_down and never sent")
    func runningFinishesLateRefused() async throws {
        let (mock, clock, client) = try Self.slowClient(answering: "done", after: .seconds(5))
        mock.stub(.get, "/late", .text("never sent"))
        let running = Task { try await client.send(Call(path: "slow")) }
        await clock.waitForAlarms(2)  // the call's deadline and the mock's delay
        let shutdown = Task { await client.shutdown(gracePeriod: .seconds(30)) }
        await clock.waitForAlarms(3)  // and the grace period
        #expect(client.isShuttingDown)
        let late = await #expect(throws: NetworkError.self) { try await client.send(Call(path: "late")) }
        #expect(late?.kind == .shutDown)
        #expect(late?.phase == .building)
        clock.advance(by: .seconds(5))
        #expect(String(decoding: try await running.value, as: UTF8.self) == "done")
        await shutdown.value
        #expect(mock.recordedRequests.map(\.path) == ["/slow"])
        #expect(clock.pendingAlarms == 0, "the grace period's alarm is removed once the calls are done")
    }

    @Test("when the grace period runs out, the calls still running end as shut_down")
    func gracePeriodRunsOut() async throws {
        let (_, clock, client) = try Self.slowClient(answering: "too late", after: .seconds(300))
        let running = Task { try await client.send(Call(path: "slow")) }
        await clock.waitForAlarms(2)
        let shutdown = Task { await client.shutdown(gracePeriod: .seconds(10)) }
        await clock.waitForAlarms(3)
        clock.advance(by: .seconds(10))
        let error = await #expect(throws: NetworkError.self) { try await running.value }
        #expect(error?.kind == .shutDown)
        #expect(error?.phase == .awaitingResponse)
        await shutdown.value
        #expect(!Task.isCancelled)
    }

    @Test("with no call running, the shutdown returns at once and later calls are refused")
    func idle() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("ok"))
        let clock = ManualTimeSource()
        let client = try Self.client(mock, clock: clock)
        #expect(String(decoding: try await client.send(Call(path: "x")), as: UTF8.self) == "ok")
        await client.shutdown(gracePeriod: .seconds(30))
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call(path: "x")) }
        #expect(error?.kind == .shutDown)
        #expect(clock.pendingAlarms == 0)
    }

    @Test("NetworkClientService: the group's graceful shutdown lets the running call finish and refuses a late one")
    func service() async throws {
        let (_, clock, client) = try Self.slowClient(answering: "done", after: .seconds(5))
        try await testGracefulShutdown { trigger in
            let service = Task { try await NetworkClientService(client, gracePeriod: .seconds(30)).run() }
            let running = Task { try await client.send(Call(path: "slow")) }
            await clock.waitForAlarms(2)
            trigger.triggerGracefulShutdown()
            await clock.waitForAlarms(3)
            let late = await #expect(throws: NetworkError.self) { try await client.send(Call(path: "slow")) }
            #expect(late?.kind == .shutDown)
            clock.advance(by: .seconds(5))
            #expect(String(decoding: try await running.value, as: UTF8.self) == "done")
            try await service.value
        }
    }
}
