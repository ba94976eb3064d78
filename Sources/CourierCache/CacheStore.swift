import Courier

/// Where a ``ResponseCache`` keeps its responses: ``MemoryCacheStore``, ``DiskCacheStore``, or a
/// store of your own.
///
/// A store is a bounded map from key to ``CachedResponse``: it decides what to evict, and it may
/// drop anything at any time (a cache miss is always correct). The cache calls it from the calling
/// task, so its methods must be quick and must not block for long. One store may serve several
/// clients at once.
public protocol CacheStore: Sendable {
    /// The response stored under `key`, or `nil`.
    func response(for key: String) -> CachedResponse?
    /// Stores `response` under its ``CachedResponse/key``, replacing what was there.
    func store(_ response: CachedResponse)
    /// Removes what is stored under `key`.
    func remove(_ key: String)
}
