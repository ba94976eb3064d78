import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCurl

@Suite("CurlTransport.executor: callers on the transport's own thread", .timeLimit(.minutes(2)))
struct CurlExecutorTests {
    @Test("calls from tasks that prefer the executor run on the transport's thread and each completes once")
    func callsOnTheEngine() async throws {
        try await withServer { server in
            let (client, transport) = try curlClient(server)
            let (done, onEngine) = try await withTaskExecutorPreference(transport.executor) {
                try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            var done = 0
                            var onEngine = true
                            for call in 0..<25 {
                                let response = try await client.response(
                                    for: EchoEndpoint(query: [QueryItem("id", "\(worker)-\(call)")]))
                                #expect(response.value.query.first?[1] == "\(worker)-\(call)")
                                onEngine = onEngine && transport.isOnTransportThread
                                done += 1
                            }
                            return (done, onEngine)
                        }
                    }
                    return try await group.reduce(into: (0, true)) { $0 = ($0.0 + $1.0, $0.1 && $1.1) }
                }
            }
            #expect(done == 200)
            #expect(onEngine, "every step after a call must run on the transport's thread")
            #expect(server.requestCount == 200)
            #expect(!transport.isOnTransportThread, "a task without the preference stays off the transport's thread")
            await client.shutdown()
        }
    }

    @Test("cancelling a task on the transport's thread ends its call as cancelled and closes the connection")
    func cancelOnTheEngine() async throws {
        try await withServer { server in
            let (client, transport) = try curlClient(server)
            let task = Task(executorPreference: transport.executor) {
                try await client.send(RawEndpoint(path: "delay/120000"))
            }
            #expect(await eventually { server.requestCount == 1 })
            task.cancel()
            await expectNetworkError(.cancelled) { try await task.value }
            #expect(await eventually { server.connectionsOpen == 0 })
            await client.shutdown()
        }
    }

    @Test("shutdown while tasks prefer the executor: their calls fail as cancelled, and they go on off the transport's thread")
    func shutdownWithTasksOnTheEngine() async throws {
        try await withServer { server in
            let (client, transport) = try curlClient(server)
            let task = Task(executorPreference: transport.executor) { () -> (NetworkError?, Bool) in
                var failure: NetworkError?
                do {
                    _ = try await client.send(RawEndpoint(path: "delay/120000"))
                } catch {
                    failure = error as? NetworkError
                }
                // The transport is gone: this step and the sleep after it run elsewhere.
                try? await Task.sleep(for: .milliseconds(10))
                return (failure, transport.isOnTransportThread)
            }
            #expect(await eventually { server.requestCount == 1 })
            await transport.shutdown()
            let (failure, stillOnEngine) = await task.value
            #expect(failure?.kind == .cancelled)
            #expect(!stillOnEngine)
            let late = await Task(executorPreference: transport.executor) { 21 * 2 }.value
            #expect(late == 42, "a task that prefers a stopped transport's executor still runs")
            await client.shutdown()
        }
    }
}
