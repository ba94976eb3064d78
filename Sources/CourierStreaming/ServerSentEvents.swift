import Courier
import Foundation
import HTTPTypes
import Logging

/// When an event stream connects again after its connection ended.
public struct EventStreamReconnection: Sendable, Hashable {
    /// Whether it reconnects at all; `true` by default.
    public var isEnabled = true
    /// The wait before reconnecting until the server sets one with `retry`: 3 seconds by default.
    public var defaultDelay: Duration = .seconds(3)
    /// The longest wait honoured from a server's `retry`: 60 seconds by default.
    public var maxDelay: Duration = .seconds(60)
    /// The shortest wait, whatever the server's `retry` says: 100 milliseconds by default.
    public var minimumDelay: Duration = .milliseconds(100)
    /// The most reconnections in a row after connections that brought no event: 5 by default. The
    /// wait doubles with each of them. Only a whole event starts the count over (half a line or a
    /// comment does not), or a connection that stayed open for ``maxDelay``.
    public var maxAttempts = 5

    /// The defaults.
    public init() {}

    /// No reconnection: the sequence ends (or fails) with its first connection.
    public static var never: EventStreamReconnection {
        var policy = EventStreamReconnection()
        policy.isEnabled = false
        return policy
    }

    /// The wait before the next connection, given the server's `retry` and how many connections
    /// in a row brought nothing (each doubles it).
    func delay(serverSaid: Duration?, emptyInARow: Int = 0) -> Duration {
        let base = max(minimumDelay, serverSaid ?? defaultDelay)
        return min(base * (1 << min(max(0, emptyInARow), 16)), max(maxDelay, minimumDelay))
    }

    /// Whether a failure is one a stream reconnects after: the connection failed, or it reached
    /// the per-connection body cap (the next one resumes from the last event ID).
    static func reconnects(after error: NetworkError) -> Bool {
        [.connectionClosed, .connectFailure, .timedOut, .dnsFailure, .responseTooLarge].contains(error.kind)
    }
}

extension NetworkClient {
    /// The events of a `text/event-stream` endpoint, read as they arrive, reconnecting when the
    /// connection ends.
    ///
    /// An iterator's reading is one call (one request id, one log line and report, with every
    /// connection's metrics); each connection is a resume step of it through the whole chain
    /// (headers, middleware, its own head deadline), asking for `Accept: text/event-stream` and,
    /// after the first, sending `Last-Event-ID`. The
    /// sequence ends when the server answers `204 No Content`; it fails with a `NetworkError`
    /// when an answer is not a `text/event-stream` (`invalid_response`), when a status is refused
    /// (`http_status`), or when reconnecting is refused: after ``EventStreamReconnection/maxAttempts``
    /// in a row, or by the host's retry budget (`Resilience.retryBudget`). A connection that ends,
    /// or fails as closed, timed out or unreachable, is opened again after the server's `retry`
    /// (or ``EventStreamReconnection/defaultDelay``), on the client's clock.
    ///
    /// Reading is the backpressure: a connection's bytes are taken only as fast as events are read.
    /// The endpoint's timeout bounds each connection's wait for its head; after it, a connection
    /// is never cut by the request timeout, only when no byte arrives for the stall limit
    /// (`NetworkClient.bodyStallLimit`, 30 s by default: a server that sends nothing for
    /// longer, not even a heartbeat comment, needs a longer `timeouts.stall`), and it is then
    /// opened again. `Endpoint.maxResponseBytes` holds per connection. Only a request that may go
    /// again reconnects (`RepeatRule`: an idempotent method such as `GET`, or an
    /// `Idempotency-Key`): a `POST` stream without a key ends, or fails, with its connection.
    ///
    /// ```swift
    /// for try await event in client.events(PriceFeed()) where event.type == "price" {
    ///     print(event.data)
    /// }
    /// ```
    /// - Parameters:
    ///   - endpoint: The stream's endpoint.
    ///   - reconnection: When to connect again.
    ///   - maxEventBytes: The cap on one line and one event's data.
    /// - Returns: The events.
    public func events<E: Endpoint>(
        _ endpoint: E, reconnection: EventStreamReconnection = .init(),
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes
    ) -> ServerSentEvents {
        // An event stream reports no progress: its reporter ends at once.
        endpoint.progress?.finishUnused()
        let streaming = StreamingEndpoint(base: endpoint, accept: "text/event-stream")
        // Each connection's body is bounded by the stall limit, never by the request timeout.
        let bounds = TransferBounds(stall: bodyStallLimit, end: nil)
        return ServerSentEvents(
            client: self, reconnection: reconnection, maxEventBytes: maxEventBytes, plan: RepeatPlan(streaming, on: self)
        ) {
            LongCall(streaming, on: self, bounds: bounds)
        }
    }
}

/// The events of one `text/event-stream` endpoint (see `NetworkClient.events(_:reconnection:maxEventBytes:)`).
/// Every error it throws is a `NetworkError`.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent

    let client: NetworkClient
    let reconnection: EventStreamReconnection
    let maxEventBytes: Int
    /// When a reconnection may happen: the request may go again, the host's budget pays, after the wait.
    let plan: RepeatPlan
    /// Makes the one call an iterator reads over all its connections (see ``LongCall``).
    let makeCall: @Sendable () -> LongCall

    /// The `Last-Event-ID` a reconnection sends: only an id a header can carry (empty, over 1 KiB,
    /// with control characters or surrounding spaces, it is left out and the server starts over,
    /// rather than failing the reconnection).
    static func lastEventIDHeader(_ id: String?) -> [(String, String)] {
        guard let id, !id.isEmpty, id.utf8.count <= 1024, id.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }),
            id.first != " ", id.last != " "
        else { return [] }
        return [("Last-Event-ID", id)]
    }

    /// An event's data decoded as JSON with the client's decoder (`NetworkClient.jsonDecoder`,
    /// made from `ClientConfiguration.json`).
    ///
    /// ```swift
    /// let feed = client.events(PriceFeed())
    /// for try await event in feed where event.type == "price" {
    ///     let price = try feed.decode(event, as: Price.self)
    /// }
    /// ```
    /// - Parameters:
    ///   - event: An event of this stream.
    ///   - type: What its data decodes to.
    /// - Returns: The value.
    /// - Throws: `NetworkError.Kind.decoding` naming the event's type when its data is not that JSON.
    public func decode<Value: Decodable>(_ event: ServerSentEvent, as type: Value.Type) throws(NetworkError) -> Value {
        do {
            return try client.jsonDecoder.decode(type, from: Data(event.data.utf8))
        } catch {
            throw NetworkError(
                kind: .decoding, phase: .decoding,
                message: "the data of a \"\(event.type.prefix(64))\" event is not \(Value.self) as JSON: \(error)",
                underlying: error)
        }
    }

    /// Whether a connection that ended is opened again: reconnection is on and the request may go again.
    var reconnects: Bool { reconnection.isEnabled && plan.requestMayRepeat }

    /// Starts reading: the first connection opens on the first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// Reads events, connecting when it needs to.
    public struct Iterator: AsyncIteratorProtocol {
        let stream: ServerSentEvents
        private var parser: ServerSentEventParser
        private var body: ResponseBody.AsyncIterator?
        private var ready: [ServerSentEvent] = []
        /// The next of ``ready`` to hand out (an index, not `removeFirst`, which moves the rest).
        private var readyIndex = 0
        private var connections = 0
        private var attemptsWithoutEvent = 0
        /// When the current connection's head came.
        private var openedAt: ContinuousClock.Instant?
        private var finished = false
        /// How the last connection failed, thrown when no reconnection follows.
        private var lastFailure: NetworkError?
        /// The one call of this reading, made when it first connects; finished when the reading
        /// ends (or, dropped, as cancelled).
        private var call: LongCall?

        init(stream: ServerSentEvents) {
            self.stream = stream
            parser = ServerSentEventParser(maxEventBytes: stream.maxEventBytes)
        }

        /// The next event, or `nil` once the server said `204` (or the stream ended for good).
        public mutating func next() async throws -> ServerSentEvent? {
            do {
                if let event = try await nextEvent() { return event }
                // Ended: the server said 204, or the connection ended with no reconnection.
                call?.finish(nil)
                return nil
            } catch {
                finished = true
                body = nil
                let failure = NetworkError.converting(error, phase: .receiving)
                throw call?.finish(failure) ?? failure
            }
        }

        private mutating func nextEvent() async throws -> ServerSentEvent? {
            while !finished {
                if readyIndex < ready.count {
                    readyIndex += 1
                    return ready[readyIndex - 1]
                }
                if body == nil {
                    try await connect()
                    continue
                }
                let chunk: Data?
                do {
                    chunk = try await body?.next()
                } catch {
                    try await connectionEnded(.converting(error, phase: .receiving))
                    continue
                }
                guard let chunk else {
                    try await connectionEnded(nil)
                    continue
                }
                do {
                    ready = try parser.feed(chunk)
                    readyIndex = 0
                    // Only an event is progress: half a line, a comment or a retry field does not
                    // reset the doubling waits (a server that sends a byte and drops the
                    // connection cannot hold the client in a fast reconnect loop).
                    if !ready.isEmpty { attemptsWithoutEvent = 0 }
                } catch {
                    // A line or an event past the cap: the stream itself is malformed.
                    finished = true
                    body = nil
                    throw error
                }
            }
            return nil
        }

        /// Opens a connection (waiting first when it is not the first), or ends the sequence.
        private mutating func connect() async throws {
            if connections > 0 {
                guard stream.reconnects else {
                    finished = true
                    return
                }
                guard attemptsWithoutEvent < stream.reconnection.maxAttempts else {
                    finished = true
                    throw lastFailure
                        ?? NetworkError(
                            kind: .connectionClosed, phase: .receiving,
                            message: "the event stream's connections ended \(attemptsWithoutEvent + 1) times in a row without an event")
                }
                // The server's `retry` (or the default), doubled after each connection without an
                // event: the wait the one repeat policy waits, after the host's budget paid.
                let wait = stream.reconnection.delay(serverSaid: parser.reconnectionTime, emptyInARow: attemptsWithoutEvent)
                attemptsWithoutEvent += 1
                let call = self.call ?? stream.makeCall()
                self.call = call
                do throws(RepeatPlan.Refusal) {
                    try await call.again(stream.plan, after: wait)
                } catch .cancelled {
                    throw NetworkError.cancelled(phase: .connect)
                } catch {
                    finished = true
                    throw lastFailure
                        ?? NetworkError(
                            kind: .connectionClosed, phase: .receiving,
                            message: "the event stream's connection ended and the host's retry budget refused a reconnection")
                }
            }
            connections += 1
            parser.restart()
            let call = self.call ?? stream.makeCall()
            self.call = call
            let response: StreamedResponse
            do {
                response = try await call.connect(setting: ServerSentEvents.lastEventIDHeader(parser.lastEventID))
            } catch {
                guard EventStreamReconnection.reconnects(after: error), stream.reconnects else {
                    finished = true
                    throw error
                }
                lastFailure = error
                return  // `body` stays nil: the next round reconnects
            }
            lastFailure = nil
            openedAt = stream.client.configuration.timeSource.now
            if response.head.status.code == 204 {
                finished = true
                return
            }
            guard response.head.status.code == 200 else {
                finished = true
                throw NetworkError(
                    kind: .invalidResponse, phase: .validating,
                    message: "an event stream answers 200 (or 204 to end it), not \(response.head.status.code)",
                    status: response.head.status.code)
            }
            let type = response.head.headerFields[.contentType] ?? ""
            guard type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream" else {
                finished = true
                throw NetworkError(
                    kind: .invalidResponse, phase: .validating,
                    message: "the answer is \(type.isEmpty ? "without a Content-Type" : "'\(type)'"), not a text/event-stream",
                    status: response.head.status.code)
            }
            body = response.body.makeAsyncIterator()
        }

        /// The connection ended cleanly (`error` nil) or failed: reconnect, or fail with `error`.
        private mutating func connectionEnded(_ error: NetworkError?) async throws {
            body = nil
            lastFailure = error
            // A connection that stayed open for the longest wait was a healthy one, events or not
            // (a quiet feed kept alive by comments): the waits start over.
            if let openedAt, stream.client.configuration.timeSource.now - openedAt >= stream.reconnection.maxDelay {
                attemptsWithoutEvent = 0
            }
            if let error, !EventStreamReconnection.reconnects(after: error) || !stream.reconnects {
                finished = true
                throw error
            }
            if !stream.reconnects { finished = true }
        }
    }
}
