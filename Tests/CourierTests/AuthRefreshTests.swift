import Courier
import CourierMock
import CourierTestSupport
import Foundation
import Testing

@Suite("Auth refresh")
struct AuthRefreshTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path: String { "me" }
    }

    /// Hands out `token-N`; counts refreshes; can be told to fail or to be slow.
    final class Tokens: CredentialProvider {
        let refreshes = Locked(0)
        let fails: Bool
        let refreshDelay: Duration
        init(fails: Bool = false, refreshDelay: Duration = .milliseconds(50)) {
            self.fails = fails
            self.refreshDelay = refreshDelay
        }
        func credential() async throws -> String { "Bearer token-0" }
        func refresh(rejected: String) async throws -> String {
            let number = refreshes.withLock { count -> Int in
                count += 1
                return count
            }
            try await Task.sleep(for: refreshDelay)
            if fails { throw CancellationError() }
            return "Bearer token-\(number)"
        }
    }

    /// 401 unless the request carries the expected token.
    static func server(accepting token: String) -> MockTransport {
        let mock = MockTransport()
        mock.stub(.get, "/me") { request in
            request.head.headerFields[.authorization] == token ? .status(200, body: Data("me".utf8)) : .status(401)
        }
        return mock
    }

    static func client(_ mock: MockTransport, _ auth: AuthRefreshMiddleware) throws -> NetworkClient {
        try NetworkClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", transport: "mock"), transport: mock, middleware: [auth])
    }

    @Test("50 concurrent calls hitting 401 cause exactly one refresh, and all succeed with the new credential")
    func singleFlight() async throws {
        let tokens = Tokens()
        let mock = Self.server(accepting: "Bearer token-1")
        let client = try Self.client(mock, AuthRefreshMiddleware(provider: tokens))
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { (try? await client.send(Call())) == Data("me".utf8) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 50 && results.allSatisfy { $0 })
        #expect(tokens.refreshes.withLock { $0 } == 1)
        // Later calls use the new credential at once.
        let before = mock.recordedRequests.count
        _ = try await client.send(Call())
        #expect(mock.recordedRequests.count == before + 1)
    }

    @Test("a failed refresh fails every waiting call with one clear error")
    func failedRefresh() async throws {
        let tokens = Tokens(fails: true)
        let client = try Self.client(Self.server(accepting: "never"), AuthRefreshMiddleware(provider: tokens))
        let kinds = await withTaskGroup(of: NetworkError.Kind?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await client.send(Call())
                        return nil
                    } catch {
                        return (error as? NetworkError)?.kind
                    }
                }
            }
            return await group.reduce(into: [NetworkError.Kind?]()) { $0.append($1) }
        }
        #expect(kinds.allSatisfy { $0 == .authenticationFailed })
        #expect(tokens.refreshes.withLock { $0 } == 1)
    }

    @Test("a call is repeated once: a second 401 is returned as an http_status failure")
    func onlyOnce() async throws {
        let tokens = Tokens(refreshDelay: .zero)
        let mock = Self.server(accepting: "never")
        let client = try Self.client(mock, AuthRefreshMiddleware(provider: tokens))
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 401)
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("repeats draw from the host's retry budget: once it is spent, the 401 is returned and the refusal is counted")
    func budget() async throws {
        let tokens = Tokens(refreshDelay: .zero)
        let mock = Self.server(accepting: "never")
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = ManualTimeSource()
        configuration.resilience.retryBudget.share = 0
        configuration.resilience.retryBudget.minPerSecond = 1
        configuration.resilience.retryBudget.window = .seconds(2)
        let client = try NetworkClient(
            configuration: configuration, transport: mock, middleware: [AuthRefreshMiddleware(provider: tokens, maxRefreshes: 100)])
        var refused = 0
        for _ in 0..<5 {
            let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
            #expect(error?.status == 401)
            if error?.metrics?.retryRefusedByBudget == true { refused += 1 }
        }
        // One repeat a second over two seconds: two calls were repeated, three were not.
        #expect(mock.recordedRequests.count == 5 + 2)
        #expect(refused == 3)
        await client.shutdown()
    }

    @Test("the refresh limit stops a refresh loop")
    func limit() async throws {
        let tokens = Tokens(refreshDelay: .zero)
        let time = ManualTimeSource()
        let client = try Self.client(
            Self.server(accepting: "never"),
            AuthRefreshMiddleware(provider: tokens, maxRefreshes: 2, refreshWindow: .seconds(60), timeSource: time))
        for _ in 0..<2 { _ = try? await client.send(Call()) }
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call()) }
        #expect(error?.kind == .authenticationFailed)
        #expect(error?.message.contains("refresh limit") == true)
        #expect(tokens.refreshes.withLock { $0 } == 2)
        time.advance(by: .seconds(61))
        _ = try? await client.send(Call())
        #expect(tokens.refreshes.withLock { $0 } == 3)
    }

    /// A refresh that finishes only when the test says: `token-new`.
    final class HeldRefresh: CredentialProvider {
        let started = Locked(0)
        private let held = Locked<[CheckedContinuation<Void, Never>]>([])
        func credential() async throws -> String { "Bearer token-0" }
        func refresh(rejected: String) async throws -> String {
            await withCheckedContinuation { continuation in
                held.withLock { $0.append(continuation) }
                started.withLock { $0 += 1 }
            }
            return "Bearer token-new"
        }
        func release() {
            for continuation in held.withLock({ list in
                defer { list = [] }
                return list
            }) { continuation.resume() }
        }
    }

    @Test("a call waiting for a refresh ends at its deadline (timed_out) or its cancellation; the refresh goes on for the others")
    func waitWithinBudget() async throws {
        let provider = HeldRefresh()
        let clock = ManualTimeSource()
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.timeSource = clock
        configuration.exportsMetrics = false
        let mock = Self.server(accepting: "Bearer token-new")
        let client = try NetworkClient(
            configuration: configuration, transport: mock, middleware: [AuthRefreshMiddleware(provider: provider)])
        struct Short: Endpoint {
            typealias Output = Data
            var path: String { "me" }
            var timeout: Duration? { .seconds(2) }
        }
        let timed = Task { try await client.send(Short()) }
        let cancelled = Task { try await client.send(Call()) }
        let patient = Task { try await client.send(Call()) }
        #expect(await eventually { provider.started.withLock { $0 } == 1 && mock.recordedRequests.count == 3 })
        clock.advance(by: .seconds(3))
        let late = await #expect(throws: NetworkError.self) { try await timed.value }
        #expect(late?.kind == .timedOut, "the deadline ended its wait for the refresh")
        cancelled.cancel()
        let stopped = await #expect(throws: NetworkError.self) { try await cancelled.value }
        #expect(stopped?.kind == .cancelled)
        provider.release()
        #expect(try await patient.value == Data("me".utf8), "the refresh went on, and the call still waiting got it")
        #expect(provider.started.withLock { $0 } == 1)
    }
}
