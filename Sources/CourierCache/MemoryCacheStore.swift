import Courier
import Synchronization

/// A ``CacheStore`` in memory, bounded by bytes and by entries; the least recently used entry is
/// evicted first.
public final class MemoryCacheStore: CacheStore {
    /// The secret the entries' `Vary` values are fingerprinted with (``VaryKey``): the store's own,
    /// so that every cache on this store matches its entries.
    let varyKey = FingerprintKey()
    /// A reference, so that a hit updates its last use without rewriting the dictionary's value
    /// (which allocated on every hit).
    private final class Slot {
        let response: CachedResponse
        let size: Int
        var lastUse: UInt64

        init(response: CachedResponse, size: Int, lastUse: UInt64) {
            self.response = response
            self.size = size
            self.lastUse = lastUse
        }
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var bytes = 0
        var tick: UInt64 = 0
    }

    /// The most bytes the entries may take together (bodies and header fields).
    public let maxBytes: Int
    /// The most entries it holds.
    public let maxEntries: Int
    private let state = Mutex(State())

    /// The size a store has unless told otherwise: 64 MiB.
    public static let defaultMaxBytes = 64 << 20
    /// The entries a store keeps unless told otherwise.
    public static let defaultMaxEntries = 10_000

    /// Creates an empty store.
    /// - Parameters:
    ///   - maxBytes: The most bytes the entries may take together; 64 MiB by default, at least 1.
    ///   - maxEntries: The most entries; 10,000 by default, at least 1.
    public init(maxBytes: Int = defaultMaxBytes, maxEntries: Int = defaultMaxEntries) {
        self.maxBytes = max(1, maxBytes)
        self.maxEntries = max(1, maxEntries)
    }

    /// The entries held now.
    public var count: Int { state.withLock { $0.slots.count } }
    /// The bytes held now.
    public var bytes: Int { state.withLock { $0.bytes } }

    public func response(for key: String) -> CachedResponse? {
        state.withLock { state in
            guard let slot = state.slots[key] else { return nil }
            state.tick += 1
            slot.lastUse = state.tick
            return slot.response
        }
    }

    public func store(_ response: CachedResponse) {
        let size = response.size
        guard size <= maxBytes else { return remove(response.key) }
        state.withLock { state in
            if let old = state.slots.removeValue(forKey: response.key) { state.bytes -= old.size }
            state.tick += 1
            // Evicts the least recently used entries until the new one fits: a scan per eviction,
            // bounded by `maxEntries`; hits and stores that fit pay nothing for it.
            while !state.slots.isEmpty, state.bytes + size > maxBytes || state.slots.count >= maxEntries {
                guard let oldest = state.slots.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                state.slots[oldest.key] = nil
                state.bytes -= oldest.value.size
            }
            state.slots[response.key] = Slot(response: response, size: size, lastUse: state.tick)
            state.bytes += size
        }
    }

    public func remove(_ key: String) {
        state.withLock { state in
            if let old = state.slots.removeValue(forKey: key) { state.bytes -= old.size }
        }
    }
}
