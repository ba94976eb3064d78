import Dispatch
import Foundation
import HTTPTypes
import Logging

/// Where an API object is in its life.
public enum APIState: Sendable, Hashable {
    /// Created, not started.
    case idle
    /// Started; the call is in flight.
    case running
    /// Finished with a decoded output.
    case succeeded
    /// Finished with an error.
    case failed
    /// Cancelled; cancellation has been reported.
    case cancelled
}

/// One remote call, described once, as an object: the YTKNetwork / ASIHTTPRequest model.
///
/// Subclass it and override what the call needs; only ``path`` is usually required:
///
/// ```swift
/// final class GetUser: BaseAPI<User>, @unchecked Sendable {
///     let id: Int
///     init(client: NetworkClient, id: Int) {
///         self.id = id
///         super.init(client: client)
///     }
///     override var path: String { "users/\(id)" }
/// }
///
/// let call = GetUser(client: client, id: 42)
/// try call.start { result in print(result) }     // completion handler
/// let user = try await GetUser(client: client, id: 42).response()   // async
/// ```
///
/// An API object is **single use**. ``start()`` works once; a second start throws
/// ``NetworkError/Kind/alreadyStarted`` and does not disturb the first call. ``cancel()`` is
/// idempotent in every state. The completion is called **exactly once** per started (or cancelled)
/// object, and never after cancellation has been reported. Use ``Endpoint`` and
/// ``NetworkClient/send(_:)`` when you prefer a value type.
///
/// Overridden properties are read once, when the call starts, on the thread that calls `start`.
/// They should be pure: the object is shared with the task that runs the call. Swift requires a
/// subclass to restate `@unchecked Sendable`; it is sound when the subclass adds only `let`
/// properties of `Sendable` types, as in the example.
open class BaseAPI<Output: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every mutable property lives in `box`, behind a lock. Subclasses are
    // expected to add only immutable stored properties (documented above).

    /// The client that runs the call.
    public let client: NetworkClient

    /// The queue the completion handler runs on. Defaults to the global concurrent queue: server
    /// processes often never run the main queue, so Courier does not default to it.
    public let completionQueue: DispatchQueue

    private struct Box {
        var lifecycle = APILifecycle<Task<Void, Never>>()
        var completion: (@Sendable (Result<Output, NetworkError>) -> Void)?
        var waiter: CheckedContinuation<Output, any Error>?
        var metrics: RequestMetrics?
        var responseHead: HTTPResponse?
    }

    private let box = Locked(Box())

    /// Creates an API object.
    /// - Parameters:
    ///   - client: The client that runs the call.
    ///   - completionQueue: Where the completion handler runs; `DispatchQueue.global()` by default.
    public init(client: NetworkClient, completionQueue: DispatchQueue = .global()) {
        self.client = client
        self.completionQueue = completionQueue
    }

    // MARK: What to call (override these)

    /// The base URL; `nil` (the default) uses the client's.
    open var baseURL: String? { nil }
    /// The path below the base URL, as plain text: `/` separates segments, everything else is
    /// percent-encoded (existing `%XX` escapes are kept). Empty by default.
    open var path: String { "" }
    /// The method; `GET` by default.
    open var method: HTTPRequest.Method { .get }
    /// Query items, as plain text; none by default.
    open var query: [QueryItem] { [] }
    /// Headers; they win over the client's default headers of the same name.
    open var headers: RequestHeaders { [:] }
    /// The body; none by default.
    open var body: RequestBody? { nil }
    /// The team that owns the call; none by default.
    open var team: String? { nil }
    /// The logger for this call; `nil` (the default) uses the client's.
    open var logger: Logger? { nil }
    /// The call's deadline; the client's `requestTimeout` by default.
    open var timeout: Duration? { nil }
    /// The HTTP version this call asks for; `nil` (the default) leaves it to the transport's configuration.
    open var httpVersion: HTTPVersionPreference? { nil }
    /// How this call uses the client's `ResponseCache`; `nil` (the default) uses the client's
    /// ``ClientConfiguration/cachePolicy``.
    open var cachePolicy: CachePolicy? { nil }
    /// Which statuses succeed; 2xx by default.
    open var statusValidation: StatusValidation { .successful }
    /// How the body becomes `Output`; chosen from `Output` by default (JSON for `Decodable`).
    open var decoder: ResponseDecoder<Output> { .automatic }
    /// How a rejected response's body is decoded into the error; none by default.
    open var errorDecoder: ErrorBodyDecoder? { nil }
    /// The queue the call waits in; `nil` (the default) uses the client's default queue, if it has one.
    open var requestQueue: RequestQueue? { nil }
    /// The call's priority in its queue; `normal` by default.
    open var priority: RequestPriority { .normal }
    /// Tags for ``RequestQueue/cancelAll(_:)``; none by default.
    open var tags: Set<String> { [] }
    /// Whether the call may share an identical call's transfer in its queue; `automatic` by default.
    open var deduplication: Deduplication { .automatic }
    /// The name metrics labels, logs and middleware use for this call; `nil` (the default) labels
    /// metrics by the class's name.
    open var endpointName: String? { nil }
    /// The largest response body this call accepts, in bytes; `nil` (the default) uses the client's.
    open var maxResponseBytes: Int? { nil }
    /// Where the call reports its bytes sent and received (see ``ProgressReporter``); `nil` (the
    /// default) counts nothing. An API object is single use, so its reporter reports its one call.
    open var progress: ProgressReporter? { nil }

    // MARK: Lifecycle

    /// The handler called once with the result. Set it before ``start()``; setting it after the
    /// result was delivered has no effect.
    public var completion: (@Sendable (Result<Output, NetworkError>) -> Void)? {
        get { box.withLock { $0.completion } }
        set { box.withLock { $0.completion = newValue } }
    }

    /// Where the object is now; safe to read from any thread at any time.
    public var state: APIState {
        box.withLock { box in
            switch box.lifecycle.state {
            case .idle: .idle
            case .running: .running
            case .finished(.succeeded): .succeeded
            case .finished(.failed): .failed
            case .finished(.cancelled): .cancelled
            }
        }
    }

    /// The call's metrics, once it has finished (on success or failure).
    public var metrics: RequestMetrics? { box.withLock { $0.metrics } }

    /// The response head, once a successful call has finished.
    public var responseHead: HTTPResponse? { box.withLock { $0.responseHead } }

    /// Starts the call; the result goes to ``completion``.
    /// - Throws: ``NetworkError/Kind/alreadyStarted`` if the object was started before, or
    ///   ``NetworkError/Kind/cancelled`` if it was cancelled before it started. A refused start
    ///   changes nothing and calls no completion.
    public func start() throws(NetworkError) {
        try launch(completion: nil, waiter: nil, placement: nil)
    }

    /// Sets ``completion`` and starts the call.
    /// - Parameter completion: Called once with the result, on ``completionQueue``.
    /// - Throws: As ``start()``; a refused start does not replace the existing completion.
    public func start(completion: @escaping @Sendable (Result<Output, NetworkError>) -> Void) throws(NetworkError) {
        try launch(completion: completion, waiter: nil, placement: nil)
    }

    /// Starts the call as an item of a batch: in the batch's queue, telling it when the call starts.
    func start(in placement: AssignedQueue, completion: @escaping Handler) throws(NetworkError) {
        try launch(completion: completion, waiter: nil, placement: placement)
    }

    /// Starts the call and waits for its output. Cancelling the calling task cancels the call.
    /// - Returns: The decoded output.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/alreadyStarted`` if the object was started before.
    public func response() async throws -> Output {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Output, any Error>) in
                do {
                    try launch(completion: nil, waiter: waiter, placement: nil)
                } catch {
                    waiter.resume(throwing: error)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Cancels the call. Idempotent and safe in every state: before start (the object can no
    /// longer start), while running (the transfer is stopped and ``NetworkError/Kind/cancelled``
    /// is delivered at once), and after it finished (nothing happens).
    public func cancel() {
        let (action, completion, waiter) = box.withLock { box in
            let action = box.lifecycle.cancel()
            guard case .reportCancelled = action else {
                return (action, nil, nil) as (APILifecycle<Task<Void, Never>>.CancelAction, Handler?, Waiter?)
            }
            defer {
                box.completion = nil
                box.waiter = nil
            }
            return (action, box.completion, box.waiter)
        }
        guard case .reportCancelled(let handle) = action else { return }
        handle?.cancel()
        deliver(.failure(.cancelled(phase: .transfer)), to: completion, waiter)
    }

    typealias Handler = @Sendable (Result<Output, NetworkError>) -> Void
    typealias Waiter = CheckedContinuation<Output, any Error>

    private func launch(completion: Handler?, waiter: Waiter?, placement: AssignedQueue?) throws(NetworkError) {
        let action = box.withLock { box in
            let action = box.lifecycle.start()
            if case .launch = action {
                if let completion { box.completion = completion }
                box.waiter = waiter
            }
            return action
        }
        switch action {
        case .rejectAlreadyStarted:
            throw NetworkError(
                kind: .alreadyStarted, phase: .building, message: "\(Self.self) is single use and was already started; create a new one")
        case .rejectCancelled:
            progress?.finishUnused()
            throw NetworkError(kind: .cancelled, phase: .building, message: "\(Self.self) was cancelled before it started")
        case .launch:
            // The object's properties are read here, once, on the caller's thread.
            let call = Call(self, on: client, assigned: placement)
            let decoder = decoder
            let task = Task { [self] in
                finish(await client.execute(call, decoder: decoder))
            }
            if case .cancel(let handle) = box.withLock({ $0.lifecycle.attach(task) }) {
                handle.cancel()
            }
        }
    }

    private func finish(_ result: Result<DecodedResponse<Output>, NetworkError>) {
        let (completion, waiter): (Handler?, Waiter?) = box.withLock { box in
            let outcome: APILifecycle<Task<Void, Never>>.Outcome =
                switch result {
                case .success: .succeeded
                case .failure(let error): error.kind == .cancelled ? .cancelled : .failed
                }
            guard box.lifecycle.finish(outcome) == .deliver else { return (nil, nil) }
            switch result {
            case .success(let response):
                box.metrics = response.metrics
                box.responseHead = response.head
            case .failure(let error):
                box.metrics = error.metrics
            }
            defer {
                box.completion = nil
                box.waiter = nil
            }
            return (box.completion, box.waiter)
        }
        deliver(result.map(\.value), to: completion, waiter)
    }

    private func deliver(_ result: Result<Output, NetworkError>, to completion: Handler?, _ waiter: Waiter?) {
        if let completion {
            completionQueue.async { completion(result) }
        }
        waiter?.resume(with: result.mapError { $0 as any Error })
    }
}

/// An API object is also an ``Endpoint``: its overridable properties are the endpoint's, so both
/// reach the client through one mapping. `client.send(api)` runs the description directly,
/// without the object's lifecycle (its ``BaseAPI/state`` and completion); use ``BaseAPI/start()``
/// or ``BaseAPI/response()`` for those.
extension BaseAPI: Endpoint {}
