import Foundation
import HTTPTypes
import Logging

/// A long transfer read over several connections (a download that resumes, an event stream that
/// reconnects) as one call: one request id, one place among the client's running calls, one
/// deadline (the transfer's end, when it has one), one log line and one report to the observers,
/// with the metrics of all its connections.
///
/// Each connection is a resume step: the call's request with the reading's own headers set over
/// it (`Range` and `If-Range`, `Last-Event-ID`), through the whole chain, under an owner of its own
/// (``RunningCall/connection()``) whose deadline is the head's (the endpoint's timeout from the
/// connection's start) and then, once the head is in, the body's stall limit (``BodyWatch``). A
/// connection that fails ends only itself; the call's deadline passing (its end, the client's
/// shutdown) ends the connection under way. Whether another connection follows is the reading's
/// question, asked of the one repeat policy (``RepeatPlan``).
///
/// The reader calls ``finish(_:)`` once, with the outcome; a long call dropped before that (its
/// reader gave up) finishes as cancelled.
///
/// `@unchecked Sendable`: used by one reader at a time; what a connection's end (on the reader's
/// task) writes is under a lock.
package final class LongCall: @unchecked Sendable {
    private let call: Call
    private let bounds: TransferBounds
    /// When the network part began, once the call is admitted.
    private var networkStart: Moment?
    /// What the connections' ends add up: bytes received, and the last head's status.
    private let tally = Locked(Tally())
    private var finished = false

    private struct Tally {
        var bytes: Int64 = 0
        var status: Int?
    }

    /// The long call of `endpoint` (read once, its request built once), bounded by `bounds`.
    package init(_ endpoint: some Endpoint, on client: NetworkClient, bounds: TransferBounds) {
        call = Call(endpoint, on: client, streams: true, bounds: bounds)
        self.bounds = bounds
    }

    private var owner: RunningCall { call.context.call }
    private var client: NetworkClient { call.client }

    /// Opens one connection, with `headers` set over the call's request, up to its head: a body
    /// it hands over ends the connection (not the call) when it ends, fails or is dropped. A
    /// header whose value a header cannot carry is left out.
    /// - Throws: ``NetworkError``: the connection's failure (the call goes on), or the call's when
    ///   it has ended (its deadline passed, the client is shutting down, it was finished).
    package func connect(setting headers: [(String, String)]) async throws(NetworkError) -> StreamedResponse {
        if let buildFailure = call.buildFailure { throw buildFailure }
        guard !finished else { throw NetworkError.cancelled(phase: .building) }
        // A later connection is refused once the client is shutting down, as a new call would be.
        if networkStart != nil, client.isShuttingDown { throw Call.shuttingDown }
        try admitOnce()
        if owner.deadline.hasPassed { throw callFailure(CancellationError(), recorder: TransferRecorder(owner)) }
        var request = call.request
        var own = call.context.ownHeaderNames
        for (name, value) in headers {
            guard let field = HTTPField.Name(name), HTTPField.isValidValue(value) else { continue }
            request.headerFields[field] = value
            own.insert(field)
        }
        let connection = Connection(of: owner, call: call, ownHeaderNames: own)
        if call.logLevel <= .trace { call.traceStart(request) }
        let sent = request
        // Mapped inside the queue's tracking: a queue's `cancelAll` is seen as the cancellation it is.
        let response = try await call.tracked { [self] () async throws(NetworkError) in
            do {
                return try await client.chain.run(sent, call.body, connection.context)
            } catch {
                throw end(connection, error)
            }
        }
        let head = response.head
        connection.recorder.enter(.receiving)
        guard call.settings.statusValidation.isAcceptable(head.status.code) else {
            // Refused: the start of the body goes into the error, as for any call.
            let data: Data
            do {
                data = try await response.body.collect(upTo: connection.context.maxResponseBytes)
            } catch {
                throw end(connection, error)
            }
            close(connection, bytes: Int64(data.count))
            throw call.refused(head.status, data: data)
        }
        tally.withLock { $0.status = head.status.code }
        if let whole = try? response.body.bufferedBytes(upTo: connection.context.maxResponseBytes) {
            close(connection, bytes: Int64(whole.count))
            return StreamedResponse(head: head, body: ResponseBody(data: whole), metrics: connection.recorder.metrics)
        }
        // The body is bounded by its stall limit (and the call's end), not by the head's deadline.
        let watch = BodyWatch(bounds, signal: connection.owner.deadline, clock: call.context.clock)
        connection.owner.disarm()
        let source = StreamedCallBody(body: response.body, limit: connection.context.maxResponseBytes, watch: watch) {
            [self] bytes, error in
            guard let error else {
                close(connection, bytes: bytes)
                return nil
            }
            // A stall the watch rang is named as such; anything else as the connection ended.
            let failure = end(connection, error, bytes: bytes)
            return watch.failure ?? failure
        }
        return StreamedResponse(
            head: head, body: ResponseBody(source: source, expectedLength: response.body.expectedLength),
            metrics: connection.recorder.metrics)
    }

    /// Waits before the next connection, as `plan` allows (see ``RepeatPlan/again(after:)``); the
    /// call's deadline passing (its end, the client's shutdown) ends the wait.
    /// - Throws: ``RepeatPlan/Refusal``.
    package func again(_ plan: RepeatPlan, after wait: Duration) async throws(RepeatPlan.Refusal) {
        do {
            // The call's context: its deadline signal is the call's own.
            try await call.context.interruptible { try await plan.again(after: wait) }
        } catch let refusal as RepeatPlan.Refusal {
            throw refusal
        } catch {
            throw .cancelled
        }
    }

    /// Ends the call, once: its metrics (every connection's attempts, the bytes received, the
    /// times) logged and told to the observers, with `error` when it failed; then its place and its
    /// deadline released.
    /// - Returns: The error as reported (with the request and the metrics), or `nil` on success.
    @discardableResult
    package func finish(_ error: (any Error)?) -> NetworkError? {
        guard !finished else { return error.map { NetworkError.converting($0, phase: .receiving) } }
        finished = true
        defer { owner.end() }
        let end = client.now()
        let tally = tally.withLock { $0 }
        let recorder = TransferRecorder(owner)
        recorder.update {
            if let networkStart { $0.network = networkStart.duration(to: end) }
            $0.bytesReceived = tally.bytes
        }
        if let error {
            return call.fail(reported(error, recorder: recorder), sent: call.buildFailure == nil ? call.request : nil)
        }
        let metrics = recorder.updated { $0.total = call.start.duration(to: end) }
        call.reportSuccess(status: tally.status ?? 200, metrics: metrics, authority: call.request.authority)
        return nil
    }

    deinit {
        // Dropped before its reader finished it (the reader gave up): it ends as cancelled.
        if !finished { finish(NetworkError.cancelled(phase: .receiving)) }
    }

    /// What the call reports for `error`: the call's own deadline, when it ended the reading, says
    /// how (its end, a shutdown); a failure of the bytes themselves (a checksum, a cap, a refused
    /// status) stays what it is.
    private func reported(_ error: any Error, recorder: TransferRecorder) -> NetworkError {
        let failure = NetworkError.converting(error, phase: .receiving)
        guard owner.deadline.hasPassed, [.cancelled, .timedOut, .connectionClosed, .transportFailure].contains(failure.kind) else {
            return failure
        }
        return callFailure(error, recorder: recorder)
    }

    /// Admits the call, the first time: its place among the running calls and its alarm at the
    /// transfer's end, when it has one (the stall limit bounds each connection).
    private func admitOnce() throws(NetworkError) {
        guard networkStart == nil else { return }
        guard let slot = client.admission.enter(owner.deadline) else { throw Call.shuttingDown }
        let now = client.now()
        networkStart = now
        // Without an end there is nothing to ring: each connection has its own deadlines.
        let alarm = bounds.end.map { Deadline.arm(owner.deadline, at: $0, on: client.onSystemClock ? nil : call.context.clock, now: now) }
        owner.admit(.init(slot: slot, alarm: alarm), entering: .sending) { $0.bytesSent = call.body?.length ?? 0 }
    }

    /// The call's failure once its own deadline has passed: its end, or the client's shutdown (in
    /// the phase `recorder` shows).
    private func callFailure(_ error: any Error, recorder: TransferRecorder) -> NetworkError {
        if owner.deadline.passedByShutdown {
            return Deadline.failure(error, signal: owner.deadline, timeout: .zero, recorder: recorder)
        }
        return NetworkError(kind: .timedOut, phase: recorder.phase, message: "the transfer did not end by its total time limit")
    }

    /// Ends a connection that failed with `error`: its deadline and link released, its attempts
    /// and figures added to the call's. Returns the failure as the call reports it: the call's
    /// own when its deadline has passed, the connection's head deadline as a timeout, else `error`.
    private func end(_ connection: Connection, _ error: any Error, bytes: Int64 = 0) -> NetworkError {
        let failure =
            owner.deadline.hasPassed
            ? callFailure(error, recorder: connection.recorder)
            : Deadline.failure(error, signal: connection.owner.deadline, timeout: call.settings.timeout, recorder: connection.recorder)
        close(connection, bytes: bytes)
        return failure
    }

    /// Closes a connection once (one that succeeded, or after `end(_:_:bytes:)` judged its
    /// failure): its deadline and link released, its bytes and figures added to the call's.
    private func close(_ connection: Connection, bytes: Int64) {
        guard connection.close() else { return }
        let part = connection.recorder.metrics
        tally.withLock { $0.bytes += bytes }
        TransferRecorder(owner).update { $0.take(connection: part) }
    }
}

/// One connection of a ``LongCall``: its owner, its context (the call's, with this owner and the
/// head's deadline), and the link that ends it when the call's deadline passes.
private final class Connection: Sendable {
    let owner: RunningCall
    let context: RequestContext
    private let call: RunningCall
    /// The handler on the call's deadline that ends this connection, until it is closed.
    private let link: Locked<Link>

    private struct Link {
        var token: UInt64?
        var open = true
    }

    init(of call: RunningCall, call built: Call, ownHeaderNames: Set<HTTPField.Name>) {
        self.call = call
        let owner = call.connection()
        self.owner = owner
        var context = built.context
        context.call = owner
        // The reading's own headers are the call's: a header rule does not replace them.
        context.ownHeaderNames = ownHeaderNames
        let now = built.client.now()
        // The head's deadline (the call's end, when sooner, rings the call's alarm, which ends this).
        context.deadlineMoment = now.advanced(by: built.settings.timeout)
        self.context = context
        // The call's deadline passing ends this connection's waits too.
        link = Locked(Link(token: call.deadline.register { owner.deadline.pass() }))
        let alarm = Deadline.arm(
            owner.deadline, at: context.deadlineMoment, on: built.client.onSystemClock ? nil : context.clock, now: now)
        owner.admit(.init(slot: 0, alarm: alarm), entering: context.placement == nil ? .sending : .queued) {
            $0.bytesSent = built.body?.length ?? 0
        }
    }

    var recorder: TransferRecorder { context.recorder }

    /// Ends the connection once: the link to the call's deadline removed, its own alarm and
    /// handlers released. Returns `true` the first time.
    func close() -> Bool {
        let (wasOpen, token) = link.withLock { link in
            defer { link = Link(token: nil, open: false) }
            return (link.open, link.token)
        }
        guard wasOpen else { return false }
        call.deadline.remove(token)
        owner.end()
        return true
    }
}

extension RequestMetrics {
    /// Adds one connection of a long call: what counts up (attempts, resends, redirects, time
    /// queued, unsent retries, a budget's refusal) and its view of the transfer (the last
    /// connection's replaces the one before).
    mutating func take(connection part: RequestMetrics) {
        attempts += part.attempts
        transportResends += part.transportResends
        redirects += part.redirects
        queued += part.queued
        unsentRetries += part.unsentRetries
        retryRefusedByBudget = retryRefusedByBudget || part.retryRefusedByBudget
        takeTransferView(of: part)
    }

    /// Takes another transfer's view of the connection (timings, HTTP version, reuse, address) in
    /// place of this one's: a long call's last connection, a hedged call's winning copy.
    package mutating func takeTransferView(of other: RequestMetrics) {
        phaseTimings = other.phaseTimings
        httpVersion = other.httpVersion ?? httpVersion
        reusedConnection = other.reusedConnection ?? reusedConnection
        remoteAddress = other.remoteAddress ?? remoteAddress
    }
}
