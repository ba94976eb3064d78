import Courier
import Synchronization

/// The loads of a ``ResponseCache`` in flight, by key: while one call loads or revalidates a key,
/// other calls for it wait, then look in the cache again, so many callers of one stale entry cause
/// one request.
///
/// A waiter stops waiting when its task is cancelled or its deadline passes; the leader's load is
/// bounded by its own deadline, and it always ends its load (``finish(_:)``), with or without a
/// stored response.
final class CacheLoads: Sendable {
    private struct State {
        var loading: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Becomes the key's loader (`true`), or waits for the current loader to finish (`false`).
    func lead(_ key: String, context: RequestContext) async -> Bool {
        let waiter: UInt64? = state.withLock { state in
            guard state.loading[key] != nil else {
                state.loading[key] = [:]
                return nil
            }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let waiter else { return true }
        await context.withCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state in
                    guard state.loading[key] != nil, !context.isCancelled else { return false }
                    state.loading[key]?[waiter] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            self.stopWaiting(waiter, for: key)
        }
        return false
    }

    /// Becomes the key's loader when nobody is loading it; never waits.
    func tryLead(_ key: String) -> Bool {
        state.withLock { state in
            guard state.loading[key] == nil else { return false }
            state.loading[key] = [:]
            return true
        }
    }

    /// Wakes one waiter early (its task was cancelled or its deadline passed); idempotent.
    private func stopWaiting(_ waiter: UInt64, for key: String) {
        state.withLock { $0.loading[key]?.removeValue(forKey: waiter) }?.resume()
    }

    /// Ends the key's load and wakes its waiters.
    func finish(_ key: String) {
        let waiters = state.withLock { $0.loading.removeValue(forKey: key) } ?? [:]
        for continuation in waiters.values { continuation.resume() }
    }
}
