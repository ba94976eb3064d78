import Courier
import CourierConformance
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCurl

/// Cancel racing completion, many times over: every call must end exactly once, as a whole body
/// or as `cancelled`, and nothing may be used after it is freed. Run under the sanitizers by
/// `make stress` (`scripts/stress.sh`), which CI runs too.
@Suite("CurlTransport stress: cancel racing completion", .timeLimit(.minutes(10)), .serialized)
struct CurlStressTests {
    /// `COURIER_STRESS_ITERATIONS` overrides the count (10,000 by default).
    static var iterations: Int {
        ProcessInfo.processInfo.environment["COURIER_STRESS_ITERATIONS"].flatMap(Int.init) ?? 10_000
    }

    /// Half of the iterations run with the calls on the global executor, half on the transport's
    /// own thread (``CurlTransport/executor``), where completion and cancellation meet differently.
    @Test(
        "10,000 calls each cancelled at a random moment end exactly once, whole or cancelled",
        arguments: [false, true])
    func cancelRacesCompletion(onTransportThread: Bool) async throws {
        try await withServer { server in
            let (client, transport) = try curlClient(server) { $0.requestTimeout = .seconds(30) }
            let executor: (any TaskExecutor)? = onTransportThread ? transport.executor : nil
            let total = max(1, Self.iterations / 2)
            let concurrency = 32
            var whole = 0
            var cancelled = 0
            var other: [String] = []
            await withTaskGroup(of: Result<Int, NetworkError>.self) { group in
                func collect(_ result: Result<Int, NetworkError>?) {
                    switch result {
                    case .success(let bytes):
                        if bytes == 100 || bytes == 65_536 { whole += 1 } else { other.append("a cut body of \(bytes) bytes") }
                    case .failure(let error):
                        if error.kind == .cancelled { cancelled += 1 } else { other.append(error.shortDescription) }
                    case nil:
                        break
                    }
                }
                for index in 0..<total {
                    if index >= concurrency { collect(await group.next()) }
                    group.addTask {
                        let path = index % 4 == 0 ? "bytes/65536" : "bytes/100"
                        let call = Task(executorPreference: executor) { try await client.send(RawEndpoint(path: path)) }
                        let pause = UInt64.random(in: 0...400_000)
                        if pause > 200_000 { try? await Task.sleep(nanoseconds: pause) } else { await Task.yield() }
                        call.cancel()
                        do {
                            return .success(try await call.value.count)
                        } catch let error as NetworkError {
                            return .failure(error)
                        } catch {
                            return .failure(NetworkError.converting(error, phase: .transfer))
                        }
                    }
                }
                while let result = await group.next() { collect(result) }
            }
            #expect(other.isEmpty, "unexpected outcomes: \(other.prefix(10))")
            #expect(whole + cancelled == total)
            #expect(cancelled > 0)
            await client.shutdown()
            #expect(await eventually { server.connectionsOpen == 0 })
        }
    }
}
