import Courier

/// The response cache: HTTP caching (RFC 9111) for GET and HEAD, as one link of the chain of each
/// client whose configuration has one.
///
/// Give one to `ClientConfiguration.cache`; each call's `CachePolicy` says how it uses it. A
/// fresh stored response is served without a request, a stale one with an `ETag` or
/// `Last-Modified` is revalidated (a `304` serves the stored body), and a successful unsafe
/// request (`POST`, `PUT`, `DELETE`, ...) removes what is stored for its URL. The metrics of every
/// call say what the cache did (`RequestMetrics.cache`).
///
/// One cache serves every caller of a client, so credentials scope what it serves
/// (`CredentialScope`): a response to a request with credentials (`Authorization`, `Cookie`, an
/// API key, any configured secret header) is stored under a key that includes a fingerprint of
/// them, keyed with this cache's random secret, and served only to a request with the same
/// credentials. A response to a request with `Authorization` is stored only when it says so
/// (`public`, `must-revalidate` or `s-maxage`; RFC 9111 §3.5), and a `private` response only when
/// the request carried credentials to scope it by. `s-maxage` gives no lifetime.
///
/// ```swift
/// var configuration = ClientConfiguration(baseURL: "https://catalogue.internal")
/// configuration.cache = ResponseCache(store: MemoryCacheStore(maxBytes: 32 << 20))
/// ```
///
/// One cache (and one store) may be shared by several clients. For a URL whose responses vary
/// (`Vary`), the latest variant is kept: a request with other values for the named fields is a
/// miss, and its response replaces the stored one.
public final class ResponseCache: Sendable {
    /// Where the responses are kept.
    public let store: any CacheStore
    /// The largest body stored; a larger response is passed on without being stored.
    public let maxEntryBytes: Int
    /// The loads in flight, so that callers of one key share one request.
    let loads = CacheLoads()
    /// The random secret this cache's credential fingerprints are keyed with (see
    /// `CredentialScope`): made with the cache, never stored, so a fingerprint in a key (on disk
    /// too) tells nothing about the credentials. Entries stored for credentials are not found again
    /// by a later process; they age out of the store by its size limit.
    let credentialKey = FingerprintKey()
    /// The secret the values of the request fields a response varies by are fingerprinted with
    /// (see ``VaryKey``): the store's own (a disk store's is kept beside its entries, so that other
    /// processes sharing the directory match them too: ``DiskCacheStore/varyKey``); a random one
    /// for a store of another kind.
    let varyKey: FingerprintKey

    /// The largest body stored unless told otherwise: 8 MiB.
    public static let defaultMaxEntryBytes = 8 << 20

    /// Creates a cache on a store.
    /// - Parameters:
    ///   - store: Where responses are kept (``MemoryCacheStore`` or ``DiskCacheStore``).
    ///   - maxEntryBytes: The largest body stored; 8 MiB by default, at least 0.
    public init(store: any CacheStore, maxEntryBytes: Int = defaultMaxEntryBytes) {
        self.store = store
        self.maxEntryBytes = max(0, maxEntryBytes)
        varyKey = (store as? DiskCacheStore)?.varyKey ?? (store as? MemoryCacheStore)?.varyKey ?? FingerprintKey()
    }

    /// A cache in memory.
    /// - Parameters:
    ///   - maxBytes: The most bytes its entries may take; 64 MiB by default.
    ///   - maxEntries: The most entries; 10,000 by default.
    public static func memory(maxBytes: Int = 64 << 20, maxEntries: Int = 10_000) -> ResponseCache {
        ResponseCache(store: MemoryCacheStore(maxBytes: maxBytes, maxEntries: maxEntries))
    }

    /// A cache in a directory.
    /// - Parameters:
    ///   - directory: The directory; created when missing.
    ///   - maxBytes: The most bytes its entries may take; 256 MiB by default.
    /// - Throws: `ConfigurationError` when the directory cannot be used.
    public static func disk(directory: String, maxBytes: Int = 256 << 20) throws(ConfigurationError) -> ResponseCache {
        ResponseCache(store: try DiskCacheStore(directory: directory, maxBytes: maxBytes))
    }
}
