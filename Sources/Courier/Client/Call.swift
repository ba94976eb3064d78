import Foundation
import HTTPTypes
import Logging

/// One call, from its endpoint to its outcome, as one value (OkHttp's `RealCall`,
/// AsyncHTTPClient's `Transaction`).
///
/// Built once, when the call starts (``BaseAPI/start()`` builds it on the caller's thread, so the
/// API object's properties are read there, once), from the endpoint and the client. It owns what
/// the call is: its request, its settings, its id, logger, recorder and start. Its methods are the
/// phases, each in a file of its own:
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
    /// What the endpoint says about the call, besides its request and decoder.
    let settings: CallSettings
    /// The request as built, or why it could not be (the call then fails without opening).
    let built: Result<BuiltRequest, NetworkError>
    /// A process-unique id for logs and tracing (see ``RequestID``).
    let requestID: String
    /// The endpoint's logger, or the client's. The id is added only when a line is logged.
    let logger: Logger
    /// Where the phases and the metrics of the call are kept.
    let recorder: TransferRecorder
    /// When the call began, on the configuration's clock.
    let start: Moment

    /// Builds the call for `endpoint`, read once, here.
    /// - Parameters:
    ///   - endpoint: The call's description.
    ///   - client: The client that runs it.
    ///   - assigned: The queue a batch or a loader runs the call in; `nil` uses the endpoint's or the client's.
    ///   - streams: Whether the caller reads the body as a stream.
    init(_ endpoint: some Endpoint, on client: NetworkClient, assigned: AssignedQueue? = nil, streams: Bool = false) {
        self.client = client
        settings = CallSettings(endpoint, on: client, assigned: assigned, streams: streams)
        built = RequestBuilder.build(endpoint, client: client)
        requestID = RequestID.make()
        logger = endpoint.logger ?? client.configuration.logger
        recorder = TransferRecorder(transport: client.transport.name)
        start = client.now()
    }

    /// Runs `body` as the call's network part: inside its queue's tracking when it has a queue
    /// (so ``RequestQueue/cancelAll(_:)`` and batches reach it in any state), else right here.
    func tracked<T: Sendable>(_ body: @escaping @Sendable () async throws(NetworkError) -> T) async throws(NetworkError) -> T {
        guard let placement = settings.placement else { return try await body() }
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

/// What an endpoint says about its call besides the request and the decoder, resolved against
/// the client's configuration once.
struct CallSettings: Sendable {
    /// The team that owns the call.
    var team: String?
    /// The endpoint's own name for metrics, logs and middleware; `nil` labels by ``apiType``.
    var endpointName: String?
    /// The endpoint's type, for the bounded metric label.
    var apiType: Any.Type
    /// The call's deadline, measured from its start.
    var timeout: Duration
    /// The HTTP version the call asks for; `nil` leaves it to the transport.
    var httpVersion: HTTPVersionPreference?
    /// How the call uses the response cache.
    var cachePolicy: CachePolicy
    /// Which statuses succeed.
    var statusValidation: StatusValidation
    /// How a refused response's body is read into the error.
    var errorDecoder: ErrorBodyDecoder?
    /// Where the call waits and how, when it has a queue.
    var placement: QueuePlacement?
    /// What the call belongs to, for group cancellation in its queue.
    var membership: CallMembership
    /// Whether the caller reads the body as a stream.
    var streams: Bool

    init(_ endpoint: some Endpoint, on client: NetworkClient, assigned: AssignedQueue?, streams: Bool) {
        let configuration = client.configuration
        team = endpoint.team
        endpointName = endpoint.endpointName
        apiType = type(of: endpoint)
        timeout = endpoint.timeout ?? configuration.requestTimeout
        httpVersion = endpoint.httpVersion
        cachePolicy = endpoint.cachePolicy ?? configuration.cachePolicy
        statusValidation = endpoint.statusValidation
        errorDecoder = endpoint.errorDecoder
        membership = CallMembership(tags: endpoint.tags, team: endpoint.team, batch: assigned?.batch)
        self.streams = streams
        if let queue = assigned?.queue ?? endpoint.requestQueue ?? client.queue {
            // A streamed call never shares an identical call's transfer: each reader needs its own body.
            placement = QueuePlacement(
                queue: queue, priority: endpoint.priority, deduplication: streams ? .never : endpoint.deduplication,
                onStart: assigned?.onStart)
        } else {
            placement = nil
        }
    }
}

/// The queue a batch or a keyed loader runs its calls in, whatever queue their endpoints name.
struct AssignedQueue: Sendable {
    var queue: RequestQueue
    /// The batch the call is an item of.
    var batch: BatchID? = nil
    /// Told each time the call leaves the queue (see ``QueuePlacement/onStart``).
    var onStart: (@Sendable () -> Void)? = nil
}
