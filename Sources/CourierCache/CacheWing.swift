import Courier

/// The response cache as a wing: its `cache.*` keys, the store a source's keys describe together,
/// and for a configuration with a cache, the link that uses it around each hop. Found by the
/// kernel by this enum's mangled name (`knownWings`).
package enum LinkedWing: Wing {
    package static var keys: [ConfigurationKey] {
        [
            .cache, .cacheMemoryBytes, .cacheMaxEntries, .cacheDirectory, .cacheMaxBytes, .cacheMaxEntryBytes, .cachePolicy,
            .cacheMaxStale,
        ]
    }

    package static func parts(for setup: WingSetup) throws(ConfigurationError) -> WingParts? {
        guard let cache = setup.configuration.cache else { return nil }
        return WingParts(hop: CacheLink(cache: cache, networkMiddlewareBelow: setup.hasNetworkMiddleware))
    }

    package static func describe(_ configuration: ClientConfiguration) -> [String] {
        configuration.cache != nil ? ["cache: on"] : []
    }

    package static func finishLoading(_ load: inout ConfigurationLoad) throws(ConfigurationError) {
        try CacheSpec.finish(&load)
    }
}
