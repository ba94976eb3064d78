import Courier

// The response cache's configuration: `ClientConfiguration.cache`, the `cache.*` keys, and the store
// a source's keys describe together, built once they are all read.

extension ClientConfiguration {
    /// The response cache (HTTP caching, RFC 9111); `nil`, the default, caches nothing. One cache
    /// may serve several clients. The `cache` section of the keys.
    public var cache: ResponseCache? {
        get { wings[CacheSettings.self]?.cache }
        set { wings[CacheSettings.self, of: LinkedWing.self, key: "cache", default: CacheSettings()].cache = newValue }
    }
}

/// The cache's setting in a configuration (kept in its wings' settings).
struct CacheSettings: Sendable {
    var cache: ResponseCache?
}

extension ConfigurationKey {
    /// The key `cache` (see the key table).
    public static let cache = ConfigurationKey(
        "cache", .section, default: "off", "Turns the response cache on: in memory, or on disk with `cache.directory`."
    ) { load, value, name throws(ConfigurationError) in
        if try value.flag(name, load) {
            load.wings[CacheSpec.self] = load.wings[CacheSpec.self] ?? CacheSpec()
        } else {
            load.wings[CacheSpec.self] = nil
            load.configuration.cache = nil
        }
    }
    /// The key `cache.memoryBytes` (see the key table).
    public static let cacheMemoryBytes = cacheSize(
        "cache.memoryBytes", \.memoryBytes, default: "\(MemoryCacheStore.defaultMaxBytes)", "The memory store's size.")
    /// The key `cache.maxEntries` (see the key table).
    public static let cacheMaxEntries = cacheSize(
        "cache.maxEntries", \.maxEntries, default: "\(MemoryCacheStore.defaultMaxEntries)", "The memory store's entries.")
    /// The key `cache.directory` (see the key table).
    public static let cacheDirectory = ConfigurationKey(
        "cache.directory", .string, default: "none", "A directory for a disk store (instead of memory)."
    ) { load, value, name throws(ConfigurationError) in
        let directory = try value.text(name, load)
        load.wings[CacheSpec.self] = load.wings[CacheSpec.self] ?? CacheSpec()
        load.wings[CacheSpec.self]?.directory = directory
    }
    /// The key `cache.maxBytes` (see the key table).
    public static let cacheMaxBytes = cacheSize(
        "cache.maxBytes", \.maxBytes, default: "\(DiskCacheStore.defaultMaxBytes)", "The disk store's size.")
    /// The key `cache.maxEntryBytes` (see the key table).
    public static let cacheMaxEntryBytes = cacheSize(
        "cache.maxEntryBytes", \.maxEntryBytes, default: "\(ResponseCache.defaultMaxEntryBytes)", "The largest body stored.")
    /// The key `cache.policy` (see the key table).
    public static let cachePolicy = ConfigurationKey(
        "cache.policy", .choice(CacheSpec.policies.map(\.0) + ["staleIfError"]), default: "useProtocol",
        "How calls use the cache, unless they say otherwise."
    ) { load, value, name throws(ConfigurationError) in
        let policy = try value.text(name, load)
        load.wings[CacheSpec.self] = load.wings[CacheSpec.self] ?? CacheSpec()
        load.wings[CacheSpec.self]?.policy = policy
    }
    /// The key `cache.maxStale` (see the key table).
    public static let cacheMaxStale = ConfigurationKey(
        "cache.maxStale", .seconds, default: ConfigurationKey.documented(CacheSpec.defaultMaxStale) ?? "",
        "How stale an answer `staleIfError` may give."
    ) { load, value, name throws(ConfigurationError) in
        let maxStale = try value.seconds(name, load)
        load.wings[CacheSpec.self] = load.wings[CacheSpec.self] ?? CacheSpec()
        load.wings[CacheSpec.self]?.maxStale = maxStale
    }

    static func cacheSize(
        _ name: String, _ path: any WritableKeyPath<CacheSpec, Int?> & Sendable, default value: String, _ summary: String
    ) -> Self {
        Self(name, .integer, default: value, summary) { load, value, _ throws(ConfigurationError) in
            let count = try value.wholeNumber(name, load)
            guard count > 0 else { throw load.error(name, "\(count)", allowed: "more than 0") }
            load.wings[CacheSpec.self] = load.wings[CacheSpec.self] ?? CacheSpec()
            load.wings[CacheSpec.self]?[keyPath: path] = count
        }
    }
}

/// The `cache` section's values one source gave, until its keys are all read.
struct CacheSpec: Sendable {
    var memoryBytes: Int?
    var maxEntries: Int?
    var directory: String?
    var maxBytes: Int?
    var maxEntryBytes: Int?
    var policy: String?
    var maxStale: Duration?
}

extension CacheSpec {
    /// The cache policies by their lowercase names (`staleIfError`, which takes `cache.maxStale`, aside).
    static let policies: [(String, CachePolicy)] = [
        ("useProtocol", .useProtocol), ("reloadIgnoringCache", .reloadIgnoringCache), ("revalidateAlways", .revalidateAlways),
        ("returnCacheElseLoad", .returnCacheElseLoad), ("cacheOnly", .cacheOnly),
    ]

    /// How stale an answer `staleIfError` may give unless `cache.maxStale` says.
    static let defaultMaxStale = Duration.seconds(300)

    /// Applies what the source's `cache.*` keys say, once it has named any. A new store is built
    /// when the source describes one (any of its size or place keys, which then describe the whole
    /// store) or when the configuration has none yet; `cache.policy` and `cache.maxStale` alone
    /// keep the store a file or code set and change only the policy.
    static func finish(_ load: inout ConfigurationLoad) throws(ConfigurationError) {
        guard let spec = load.wings[CacheSpec.self] else { return }
        load.wings[CacheSpec.self] = nil
        let describesStore = spec.memoryBytes != nil || spec.maxEntries != nil || spec.directory != nil || spec.maxBytes != nil
        // The largest entry is the cache's, not its store's: alone, it keeps the store.
        let maxEntryBytes = spec.maxEntryBytes ?? load.configuration.cache?.maxEntryBytes ?? ResponseCache.defaultMaxEntryBytes
        if !describesStore, let current = load.configuration.cache, spec.maxEntryBytes != nil {
            load.configuration.cache = ResponseCache(store: current.store, maxEntryBytes: maxEntryBytes)
        }
        if describesStore || load.configuration.cache == nil {
            let store: any CacheStore
            if let directory = spec.directory {
                guard spec.memoryBytes == nil, spec.maxEntries == nil else {
                    throw load.error(
                        ConfigurationKey.cacheDirectory.name, directory,
                        allowed: "either directory (with maxBytes) or memoryBytes, not both")
                }
                do {
                    store = try DiskCacheStore(directory: directory, maxBytes: spec.maxBytes ?? DiskCacheStore.defaultMaxBytes)
                } catch {
                    throw load.error(error.key, error.value, allowed: error.allowed)
                }
            } else {
                guard spec.maxBytes == nil else {
                    throw load.error(ConfigurationKey.cacheMaxBytes.name, nil, allowed: "only with cache.directory (from the same source)")
                }
                store = MemoryCacheStore(
                    maxBytes: spec.memoryBytes ?? MemoryCacheStore.defaultMaxBytes,
                    maxEntries: spec.maxEntries ?? MemoryCacheStore.defaultMaxEntries)
            }
            load.configuration.cache =
                ResponseCache(store: store, maxEntryBytes: maxEntryBytes)
        }
        let staleIfError = "staleiferror"
        if let name = spec.policy {
            if name.lowercased() == staleIfError {
                let maxStale = spec.maxStale ?? defaultMaxStale
                guard maxStale > .zero else {
                    throw load.error(ConfigurationKey.cacheMaxStale.name, "\(maxStale)", allowed: "a number of seconds above 0")
                }
                load.configuration.cachePolicy = .staleIfError(maxStale: maxStale)
            } else if let policy = policies.first(where: { $0.0.lowercased() == name.lowercased() })?.1 {
                guard spec.maxStale == nil else {
                    throw load.error(ConfigurationKey.cacheMaxStale.name, nil, allowed: "only with cache.policy staleIfError")
                }
                load.configuration.cachePolicy = policy
            } else {
                throw load.error(
                    ConfigurationKey.cachePolicy.name, name,
                    allowed: (policies.map(\.0) + ["staleIfError"]).joined(separator: ", "))
            }
        } else if let maxStale = spec.maxStale {
            guard case .staleIfError = load.configuration.cachePolicy, maxStale > .zero else {
                throw load.error(
                    ConfigurationKey.cacheMaxStale.name, "\(maxStale)", allowed: "above 0, only with cache.policy staleIfError")
            }
            load.configuration.cachePolicy = .staleIfError(maxStale: maxStale)
        }
    }
}
