import Foundation
import HTTPTypes
import Logging

/// One call, from its endpoint to its outcome, as one value (OkHttp's `RealCall`,
/// AsyncHTTPClient's `Transaction`).
///
/// Built once, when the call starts (``BaseAPI/start()`` builds it on the caller's thread, so the
/// API object's properties are read there, once), from the endpoint and the client. It owns what
/// the call is: its request, its context (id, logger, recorder, deadline, limits), its settings
/// and its start. Its methods are the phases, each in a file of its own:
///
/// - `Call+Open.swift`: the context, the deadline and admission scope, the chain up to the head;
/// - `Call+Finish.swift`: the body read whole, the status check, decoding, a failure completed;
/// - `Call+Stream.swift`: the body handed over as a stream that ends the call when it ends;
/// - `Call+Report.swift`: the log lines and the observers.
///
/// It is not generic: an async function allocates task memory for every local whose size depends
/// on a generic parameter, so the network part holds no value of the output's type. Only the
/// synchronous ``finish(_:decoder:)`` takes the endpoint's decoder.
struct Call: Sendable {
    /// The client that runs the call: its configuration, chain, admission and observers.
    let client: NetworkClient
    /// The call's context as the chain receives it: its id, team, endpoint name, deadline,
    /// limits, logger, and its running call (``RunningCall``: record, deadline signal, internals).
    let context: RequestContext
    /// The request as built (see ``RequestBuilder``); meaningful only without a ``buildFailure``.
    let request: HTTPRequest
    /// The request body, if any.
    let body: RequestBody?
    /// Why the request could not be built: the call then fails without opening.
    let buildFailure: NetworkError?
    /// What the call needs besides its context and request: how its outcome is judged and labelled.
    let settings: CallSettings
    /// For a long transfer, how its body is bounded once its head is in; `nil` for a call whose
    /// timeout covers it all.
    let bounds: TransferBounds?
    /// When the call began, on the configuration's clock.
    let start: Moment

    /// Builds the call for `endpoint`, read once, here: the one place an endpoint's fields reach a
    /// call, whether it is a value or an API object.
    /// - Parameters:
    ///   - endpoint: The call's description.
    ///   - client: The client that runs it.
    ///   - assigned: The queue a batch or a loader runs the call in; `nil` uses the endpoint's or the client's.
    ///   - streams: Whether the caller reads the body as a stream.
    ///   - bounds: For a long transfer (JSON Lines, a ``LongCall``'s download or event stream): how
    ///     its body is bounded once its head is in; the endpoint's timeout then bounds the head only.
    init(
        _ endpoint: some Endpoint, on client: NetworkClient, assigned: AssignedQueue? = nil, streams: Bool = false,
        bounds: TransferBounds? = nil
    ) {
        self.client = client
        let start = client.now()
        self.start = start
        settings = CallSettings(endpoint, on: client, assigned: assigned)
        self.bounds = bounds
        var context = client.callTemplate
        context.requestID = RequestID.make()
        context.team = endpoint.team
        // A long transfer's deadline bounds its head (and its end, when that comes first).
        let deadline = start.advanced(by: settings.timeout)
        context.deadlineMoment = bounds?.end.map { min($0, deadline) } ?? deadline
        if let logger = endpoint.logger { context.useLogger(logger) }
        context.endpointName = endpoint.endpointName
        context.httpVersion = endpoint.httpVersion
        if let policy = endpoint.cachePolicy { context.cachePolicy = policy }
        if let limit = endpoint.maxResponseBytes { context.maxResponseBytes = limit }
        // Progress is counted when the endpoint or the batch asks for it; a reporter reports one call.
        let reporter = endpoint.progress
        let reporterTaken = reporter.map { !$0.claim() } ?? false
        let meter: ProgressMeter? =
            reporter != nil || assigned?.bytes != nil
            ? ProgressMeter(reporter: reporterTaken ? nil : reporter, batch: assigned?.bytes, clock: client.configuration.timeSource) : nil
        // A streamed call never shares an identical call's transfer: each reader needs its own
        // body; nor does a call that counts progress, which counts the bytes of its own transfer.
        let placement = (assigned?.queue ?? endpoint.requestQueue ?? client.queue).map {
            QueuePlacement(
                queue: $0, priority: endpoint.priority, deduplication: streams || meter != nil ? .never : endpoint.deduplication,
                onStart: assigned?.onStart)
        }
        var internals = context.internals
        if placement != nil || streams || meter != nil {
            // What transports take as a long transfer's backstop: its own end, or a year.
            let transferEnd = bounds.map { $0.end ?? start.advanced(by: TransferBounds.noEnd) }
            internals = internals.forCall(placement: placement, streams: streams, progress: meter, transferEnd: transferEnd)
        }
        // The call's one owner: its record, its deadline's signal (which the chain's waits watch
        // from the start) and these internals.
        context.call = RunningCall.call(
            transport: client.transport.name, internals: internals, admission: client.admission, clock: context.clock)
        switch reporterTaken
            ? .failure(ProgressReporter.inUse) : RequestBuilder.build(endpoint, client: client, limits: context, timeout: settings.timeout)
        {
        case .success(let built):
            request = built.request
            body = built.body
            buildFailure = nil
            if !built.ownHeaderNames.isEmpty { context.ownHeaderNames = built.ownHeaderNames }
        case .failure(let error):
            request = HTTPRequest(method: endpoint.method, scheme: nil, authority: nil, path: nil)
            body = nil
            buildFailure = error
        }
        self.context = context
    }

    /// Where the call counts its bytes, if it does.
    var progress: ProgressMeter? { context.internals.progress }

    /// The call's id, for logs and tracing.
    var requestID: String { context.requestID }
    /// The endpoint's logger, or the client's (without the id, which is added when a line is logged).
    var logger: Logger { context.untaggedLogger }
    /// The level of ``logger``, read without copying it.
    var logLevel: Logger.Level { context.logLevel }
    /// Where the phases and the metrics of the call are kept.
    var recorder: TransferRecorder { context.recorder }

    /// Runs `body` as the call's network part: inside its queue's tracking when it has a queue
    /// (so ``RequestQueue/cancelAll(_:)`` and batches reach it in any state), else right here.
    func tracked<T: Sendable>(_ body: @escaping @Sendable () async throws(NetworkError) -> T) async throws(NetworkError) -> T {
        guard let placement = context.placement else { return try await body() }
        let result = await placement.queue.tracking(settings.membership) { () async -> Result<T, NetworkError> in
            do throws(NetworkError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// What a call needs besides its context and request: its deadline's length, how its outcome is
/// judged and labelled, and what it belongs to in its queue.
struct CallSettings: Sendable {
    /// The endpoint's type, for the bounded metric label.
    var apiType: Any.Type
    /// The call's deadline, measured from its start (a long transfer's head's).
    var timeout: Duration
    /// Which statuses succeed.
    var statusValidation: StatusValidation
    /// How a refused response's body is read into the error.
    var errorDecoder: ErrorBodyDecoder?
    /// What the call belongs to, for group cancellation in its queue.
    var membership: CallMembership

    init(_ endpoint: some Endpoint, on client: NetworkClient, assigned: AssignedQueue?) {
        apiType = type(of: endpoint)
        timeout = endpoint.timeout ?? client.configuration.requestTimeout
        statusValidation = endpoint.statusValidation
        errorDecoder = endpoint.errorDecoder
        membership = CallMembership(tags: endpoint.tags, team: endpoint.team, batch: assigned?.batch)
    }
}

/// The queue a batch or a keyed loader runs its calls in, whatever queue their endpoints name.
struct AssignedQueue: Sendable {
    var queue: RequestQueue
    /// The batch the call is an item of.
    var batch: BatchID? = nil
    /// Told each time the call leaves the queue (see ``QueuePlacement/onStart``).
    var onStart: (@Sendable () -> Void)? = nil
    /// The batch's byte total, which the call's bytes add to.
    var bytes: BatchBytes? = nil
}
