import Courier
import Foundation

/// A scripted transport for tests and for running a service without its upstreams.
///
/// Stubs are matched by method and path pattern (plus query and header values); each stub answers
/// with its responses in sequence, repeating the last. Responses can be delayed and any
/// `NetworkError` kind can be injected. Requests are recorded (the newest
/// ``Configuration/maxRecordedRequests``, so a long-running mock does not grow without bound). In strict mode (the default)
/// an unmatched request fails with `NetworkError/Kind/noMatchingStub` naming it; otherwise it
/// gets a 404.
///
/// ```swift
/// let mock = MockTransport()
/// mock.stub(.get, "/users/:id", .json(User(id: 1, name: "Ada")))
/// mock.stub(.post, "/users", responses: [.status(503), .json(User(id: 2, name: "Bob"), status: 201)])
/// let client = try NetworkClient(configuration: ClientConfiguration(baseURL: "https://api.test"), transport: mock)
/// ```
public final class MockTransport: Transport {
    /// How the mock behaves.
    public struct Configuration: Sendable {
        /// Whether an unmatched request is an error (`true`, the default) or a 404.
        public var strict = true
        /// The name it reports in metrics; `mock` by default.
        public var name = "mock"
        /// How many bytes of each request body are recorded; 1 MiB by default.
        public var maxRecordedBodyBytes = 1 << 20
        /// How many requests are kept for ``MockTransport/recordedRequests``: the newest ones;
        /// 10,000 by default. Zero records none.
        public var maxRecordedRequests = 10_000

        /// The defaults.
        public init() {}
    }

    /// A request as the mock saw it.
    public struct RecordedRequest: Sendable {
        /// The request head.
        public var head: HTTPRequest
        /// The body, up to ``Configuration/maxRecordedBodyBytes``, or `nil` when there was none.
        public var body: Data?

        /// The path without the query.
        public var path: String { String(pathWithoutQuery) }

        var pathWithoutQuery: Substring {
            let full = head.path ?? "/"
            // Searched as bytes: `?` is ASCII, and a Character search costs grapheme breaking per step.
            return full[..<(full.utf8.firstIndex(of: UInt8(ascii: "?")) ?? full.endIndex)]
        }

        /// The query items, decoded.
        public var queryItems: [QueryItem] {
            let full = head.path ?? ""
            guard let mark = full.firstIndex(of: "?") else { return [] }
            return full[full.index(after: mark)...].split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value = parts.count == 2 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
                return QueryItem(name, value)
            }
        }
    }

    private enum Responder: Sendable {
        case sequence([MockResponse], next: Int)
        case dynamic(@Sendable (RecordedRequest) -> MockResponse)
    }

    private struct Stub: Sendable {
        var matcher: MockRequestMatcher
        var responder: Responder
    }

    private struct State {
        var stubs: [Stub] = []
        /// The recorded requests; may hold up to twice the limit, the oldest first, so that
        /// trimming happens once per `limit` requests rather than on every one.
        var recorded: [RecordedRequest] = []

        mutating func record(_ request: RecordedRequest, limit: Int) {
            guard limit > 0 else { return }
            recorded.append(request)
            if recorded.count >= 2 * limit { recorded.removeFirst(recorded.count - limit) }
        }

        func newest(_ limit: Int) -> [RecordedRequest] { Array(recorded.suffix(max(0, limit))) }
        var isShutDown = false
    }

    /// The configuration.
    public let configuration: Configuration
    private let state = Locked(State())

    /// The name it reports; `mock` unless configured otherwise.
    public var name: String { configuration.name }

    /// Creates a mock with no stubs.
    /// - Parameter configuration: Strictness, name, recording limit.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Adds a stub that answers with `responses` in order, repeating the last one.
    /// Stubs are tried in the order they were added; the first match answers.
    /// - Parameters:
    ///   - method: The method, or `nil` for any.
    ///   - path: A path pattern (see ``MockRequestMatcher``).
    ///   - query: Query values the request must carry.
    ///   - headers: Header values the request must carry.
    ///   - responses: The answers, in order; must not be empty.
    public func stub(
        _ method: HTTPRequest.Method?, _ path: String, query: [String: String] = [:], headers: [String: String] = [:],
        responses: [MockResponse]
    ) {
        let matcher = MockRequestMatcher(method: method, path: path, query: query, headers: headers)
        let answers = responses.isEmpty ? [MockResponse.status(500, body: Data("the stub has no responses".utf8))] : responses
        state.withLock { $0.stubs.append(Stub(matcher: matcher, responder: .sequence(answers, next: 0))) }
    }

    /// Adds a stub that always answers with `response`.
    public func stub(
        _ method: HTTPRequest.Method?, _ path: String, query: [String: String] = [:], headers: [String: String] = [:],
        _ response: MockResponse
    ) {
        stub(method, path, query: query, headers: headers, responses: [response])
    }

    /// Adds a stub whose answer is computed from the request (an echo, say).
    public func stub(_ method: HTTPRequest.Method?, _ path: String, respond: @escaping @Sendable (RecordedRequest) -> MockResponse) {
        let matcher = MockRequestMatcher(method: method, path: path)
        state.withLock { $0.stubs.append(Stub(matcher: matcher, responder: .dynamic(respond))) }
    }

    /// The requests sent so far, oldest first: all of them, or the newest
    /// ``Configuration/maxRecordedRequests`` when more were sent.
    public var recordedRequests: [RecordedRequest] {
        let limit = configuration.maxRecordedRequests
        return state.withLock { $0.newest(limit) }
    }

    /// Removes every stub and recorded request.
    public func reset() {
        state.withLock {
            $0.stubs.removeAll()
            $0.recorded.removeAll()
        }
    }

    /// Answers from the first matching stub; see the type's documentation.
    public func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        context.recorder.update { $0.phaseTimings = .unavailable(reason: "the mock transport does no network I/O") }
        var recordedBody: Data?
        if let body { recordedBody = try await record(body, context: context) }
        let recorded = RecordedRequest(head: request, body: recordedBody)
        let responder: Responder? = try state.withLock { state in
            guard !state.isShutDown else {
                throw NetworkError(kind: .transportFailure, phase: .sending, message: "the mock transport was shut down")
            }
            state.record(recorded, limit: configuration.maxRecordedRequests)
            guard let index = state.stubs.firstIndex(where: { $0.matcher.matches(recorded) }) else { return nil }
            let responder = state.stubs[index].responder
            if case .sequence(let responses, let next) = responder {
                state.stubs[index].responder = .sequence(responses, next: min(next + 1, responses.count - 1))
            }
            return responder
        }
        let answer: MockResponse? =
            switch responder {
            case .sequence(let responses, let next): responses[next]
            case .dynamic(let respond): respond(recorded)  // outside the lock: it is caller code
            case nil: nil
            }

        guard let answer else {
            if configuration.strict {
                throw NetworkError(
                    kind: .noMatchingStub, phase: .sending,
                    message:
                        "no stub matches \(request.method.rawValue) \(recorded.path)\(recorded.queryItems.isEmpty ? "" : " with query " + (request.path ?? ""))"
                )
            }
            return TransportResponse(head: HTTPResponse(status: .notFound))
        }
        if let delay = answer.delay { try await wait(delay, context: context) }
        switch answer.outcome {
        case .fail(let error):
            throw error
        case .respond(let status, let headers, let data):
            var fields = HTTPFields()
            for entry in headers {
                if let name = HTTPField.Name(entry.name) { fields.append(HTTPField(name: name, value: entry.value)) }
            }
            let noBody = request.method == .head || status == 204 || status == 304
            return TransportResponse(
                head: HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields),
                body: ResponseBody(data: noBody ? Data() : data)
            )
        }
    }

    /// The first ``Configuration/maxRecordedBodyBytes`` of a request body. (This and ``wait(_:context:)``
    /// are functions of their own, not inlined: the values they hold have sizes known only at run
    /// time, and an async function allocates task memory for such values on every call, whether
    /// or not it reaches them.)
    @inline(never)
    private func record(_ body: RequestBody, context: RequestContext) async throws -> Data {
        var collected = Data()
        var sent: Int64 = 0
        for try await chunk in body.chunks() {
            if context.countsProgress {
                sent += Int64(chunk.count)
                context.reportBytesSent(sent)
            }
            if collected.count < configuration.maxRecordedBodyBytes {
                collected.append(chunk.prefix(configuration.maxRecordedBodyBytes - collected.count))
            }
        }
        return collected
    }

    /// Waits out a stub's delay on the call's clock: a test with a manual clock advances it instead
    /// of sleeping. The wait ends early when the call is cancelled, its deadline passes or its
    /// client's shutdown ends it.
    @inline(never)
    private func wait(_ delay: Duration, context: RequestContext) async throws {
        context.recorder.enter(.awaitingResponse)
        let clock = context.clock
        let end = min(clock.now.advanced(by: delay), context.deadline)
        guard await context.sleep(until: end), !context.isCancelled else { throw CancellationError() }
    }

    /// Makes later calls fail; recorded requests are kept.
    public func shutdown() async {
        state.withLock { $0.isShutDown = true }
    }
}

extension MockTransport {
    /// Accepts every transport setting: the mock opens no connection, so the HTTP version,
    /// connection limits, stall timeout and TLS have nothing to act on, made in code or from a
    /// registry alike. A configuration written for a real transport runs on the mock unchanged.
    /// - Parameter configuration: The client configuration.
    public func checkSettings(of configuration: ClientConfiguration) throws(ConfigurationError) {}
}

extension TransportRegistry.Entry {
    /// Registers a mock under the name `mock`; every client made from the registry shares it.
    /// - Parameter transport: The mock.
    /// - Returns: The entry.
    public static func mock(_ transport: MockTransport) -> TransportRegistry.Entry {
        TransportRegistry.Entry(name: "mock") { _ in transport }
    }
}
