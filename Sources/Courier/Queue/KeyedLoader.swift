import Dispatch

/// Loads what is wanted now, and stops loading what is no longer wanted.
///
/// A service whose set of needed resources changes while loads run (the documents of the page a
/// user is looking at, the images of the results shown) tells the loader the whole set each time
/// it changes:
///
/// ```swift
/// let thumbnails = try KeyedLoader(client: client, endpoint: { (id: Int) in GetThumbnail(id: id) }) { id, result in
///     render(id, result)
/// }
/// thumbnails.setWanted([1, 2, 3])
/// thumbnails.setWanted([2, 3, 4])   // cancels 1, keeps 2 and 3 running, starts 4
/// ```
///
/// ``setWanted(_:by:)`` reconciles:
/// - a wanted key that is neither loading nor cached starts loading (a key that failed before
///   starts again);
/// - a loading key that no consumer wants any more is cancelled (its handler is not called);
/// - a loading key that is still wanted keeps running;
/// - a key already loaded is served from the cache, without a request, when a consumer newly
///   wants it.
///
/// Several consumers can share a loader, each naming itself in `by`; a load is cancelled only
/// when no consumer wants its key. Loads run in the loader's ``RequestQueue``, so its limits,
/// ``suspend()`` and ``resume()`` apply. Results go to the handler on `callbackQueue`.
public final class KeyedLoader<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Receives each key's result.
    public typealias ResultHandler = @Sendable (Key, Result<Value, NetworkError>) -> Void

    /// The queue the loads run in.
    public let queue: RequestQueue
    private let client: NetworkClient
    private let makeCall: @Sendable (Key) -> (Call, ResponseDecoder<Value>)
    private let onResult: ResultHandler
    private let callbackQueue: DispatchQueue

    private struct Load {
        var token: UInt64
        var cancel: @Sendable () -> Void
    }

    private struct State {
        var wantedBy: [String: Set<Key>] = [:]
        var loads: [Key: Load] = [:]
        var cache: BoundedCache<Key, Value>
        var nextToken: UInt64 = 0
    }

    private let state: Locked<State>

    /// The allowed range of the cache capacity.
    public static var cacheCapacityRange: ClosedRange<Int> { 0...1_000_000 }

    /// Creates a loader.
    /// - Parameters:
    ///   - client: Runs the loads.
    ///   - queue: The queue loads run in; a new one with default limits (16 at once) when `nil`.
    ///   - cacheCapacity: Loaded values kept, oldest dropped first; 1,000 by default.
    ///   - callbackQueue: Where `onResult` runs (one result at a time); the global queue by default.
    ///   - endpoint: The call that loads one key.
    ///   - onResult: Told each key's result (not for loads cancelled because nobody wants them).
    /// - Throws: ``ConfigurationError`` when `cacheCapacity` is out of range.
    public init<E: Endpoint>(
        client: NetworkClient, queue: RequestQueue? = nil, cacheCapacity: Int = 1000, callbackQueue: DispatchQueue = .global(),
        endpoint: @escaping @Sendable (Key) -> E, onResult: @escaping ResultHandler
    ) throws(ConfigurationError) where E.Output == Value {
        guard Self.cacheCapacityRange.contains(cacheCapacity) else {
            throw ConfigurationError(key: "cacheCapacity", value: "\(cacheCapacity)", allowed: "0 to 1000000", source: "code")
        }
        let loaderQueue: RequestQueue
        if let queue {
            loaderQueue = queue
        } else {
            loaderQueue = try RequestQueue(name: "loader")
        }
        self.queue = loaderQueue
        self.client = client
        self.makeCall = { key in
            let endpoint = endpoint(key)
            return (Call(endpoint, on: client, assigned: AssignedQueue(queue: loaderQueue)), endpoint.decoder)
        }
        self.onResult = onResult
        self.callbackQueue = DispatchQueue(label: "courier.loader", target: callbackQueue)
        state = Locked(State(cache: BoundedCache(capacity: cacheCapacity)))
    }

    /// Replaces what one consumer wants, and reconciles the loads with what every consumer wants.
    /// - Parameters:
    ///   - keys: Every key this consumer wants now; an empty set withdraws it.
    ///   - consumer: Who wants them; `default` by default.
    public func setWanted(_ keys: Set<Key>, by consumer: String = "default") {
        var served: [(Key, Value)] = []
        var cancels: [@Sendable () -> Void] = []
        var starts: [(Key, UInt64)] = []
        state.withLock { state in
            let before = state.wantedBy[consumer] ?? []
            state.wantedBy[consumer] = keys.isEmpty ? nil : keys
            let wanted = state.wantedBy.values.reduce(into: Set<Key>()) { $0.formUnion($1) }
            for (key, load) in state.loads where !wanted.contains(key) {
                state.loads[key] = nil
                cancels.append(load.cancel)
            }
            for key in keys {
                if let value = state.cache[key] {
                    if !before.contains(key) { served.append((key, value)) }
                } else if state.loads[key] == nil {
                    state.nextToken += 1
                    starts.append((key, state.nextToken))
                    state.loads[key] = Load(token: state.nextToken, cancel: {})
                }
            }
        }
        for cancel in cancels { cancel() }
        for (key, token) in starts { start(key, token: token) }
        for (key, value) in served {
            callbackQueue.async { [onResult] in onResult(key, .success(value)) }
        }
    }

    /// Every key some consumer wants now.
    public var wanted: Set<Key> {
        state.withLock { $0.wantedBy.values.reduce(into: Set<Key>()) { $0.formUnion($1) } }
    }

    /// The keys loading now.
    public var loading: Set<Key> { state.withLock { Set($0.loads.keys) } }

    /// The cached value for `key`, if it was loaded and is still in the cache.
    public func value(for key: Key) -> Value? { state.withLock { $0.cache[key] } }

    /// Stops starting loads (running ones finish); see ``RequestQueue/suspend()``.
    public func suspend() { queue.suspend() }

    /// Starts waiting loads again.
    public func resume() { queue.resume() }

    /// Withdraws every consumer and cancels every load; the cache is kept.
    public func cancelAll() {
        let cancels = state.withLock { state -> [@Sendable () -> Void] in
            state.wantedBy = [:]
            defer { state.loads = [:] }
            return state.loads.values.map(\.cancel)
        }
        for cancel in cancels { cancel() }
    }

    private func start(_ key: Key, token: UInt64) {
        let (call, decoder) = makeCall(key)
        let task = Task { [client] in
            let result = await client.execute(call, decoder: decoder).map(\.value)
            finished(key, token: token, result)
        }
        let stillWanted = state.withLock { state -> Bool in
            guard state.loads[key]?.token == token else { return false }
            state.loads[key]?.cancel = { task.cancel() }
            return true
        }
        if !stillWanted { task.cancel() }
    }

    private func finished(_ key: Key, token: UInt64, _ result: Result<Value, NetworkError>) {
        let deliver = state.withLock { state -> Bool in
            guard state.loads[key]?.token == token else { return false }
            state.loads[key] = nil
            if case .success(let value) = result { state.cache.insert(value, for: key) }
            return true
        }
        guard deliver else { return }
        callbackQueue.async { [onResult] in onResult(key, result) }
    }
}
