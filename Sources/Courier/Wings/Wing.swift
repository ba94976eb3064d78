/// A wing: a feature module of this package (the cookie jar, the response cache) that adds to a
/// client what its configuration turns on, through this one registration point. The kernel never names a wing's
/// types; a program that does not link the module has none of its keys, links or per-call work.
///
/// A wing declares:
/// - its configuration keys (``keys``), which join the one key table (``ConfigurationKey/all``)
///   when the module is linked, so files, the environment, the swift-configuration reader and the
///   documentation read them like the kernel's own;
/// - what it adds to a client (``parts(for:)``): nothing (`nil`) when the configuration leaves it
///   off, else a step around each hop and the value the client keeps for it (read back with
///   ``NetworkClient/wingValue(_:)``);
/// - how it shows in a configuration's description (``describe(_:)``);
/// - what it builds once a source's keys are all read (``finishLoading(_:)``), for keys that
///   describe one thing together (the cache's store).
///
/// Its settings live in the configuration's ``WingSettings`` under a type of the wing's own, behind
/// public properties the module adds to ``ClientConfiguration``.
///
/// Wings are found once per process by the mangled name of the module's `LinkedWing` enum
/// (``linkedWings``), the way transports are (``LinkedTransport``).
package protocol Wing: SendableMetatype {
    /// The keys the wing reads, in the order the documentation lists them.
    static var keys: [ConfigurationKey] { get }
    /// What the wing adds to the client `setup` describes; `nil` when its configuration leaves
    /// the wing off.
    /// - Throws: ``ConfigurationError`` when the client's transport cannot carry the wing out.
    static func parts(for setup: WingSetup) throws(ConfigurationError) -> WingParts?
    /// The wing's parts of a configuration's redacted description (`cookies: on`); none when off.
    static func describe(_ configuration: ClientConfiguration) -> [String]
    /// Applies what a source's keys of this wing said together, once the source's keys are all read
    /// (each key keeps what it read in ``ConfigurationLoad/wings``). Nothing by default.
    static func finishLoading(_ load: inout ConfigurationLoad) throws(ConfigurationError)
}

extension Wing {
    package static func finishLoading(_ load: inout ConfigurationLoad) throws(ConfigurationError) {}
}

/// The client a wing is asked about (see ``Wing/parts(for:)``).
package struct WingSetup {
    /// The client's configuration.
    package let configuration: ClientConfiguration
    /// The transport at the end of its chain.
    package let transport: any Transport
    /// Whether network middleware run below the wing's hop link: they may add credentials a key
    /// computed above them cannot see.
    package let hasNetworkMiddleware: Bool
}

/// What a wing adds to one client.
package struct WingParts: Sendable {
    /// A link around each hop: below redirect follow-up (each redirect is a hop), above the response
    /// cache (whose key then sees what it adds), named in ``NetworkClient/linkOrder`` by its type.
    package var hop: (any Middleware)?
    /// What the client keeps for the wing (the cookie jar), read with ``NetworkClient/wingValue(_:)``.
    package var value: (any Sendable)?

    package init(hop: (any Middleware)? = nil, value: (any Sendable)? = nil) {
        self.hop = hop
        self.value = value
    }
}

/// The wings of this package: each one's product, the mangled name of its module's `LinkedWing`
/// enum (`O`; the runtime resolves the dotted form for classes only), and the names of its keys, so
/// that a key of a wing this program does not link is refused naming the product instead of being
/// unknown (a file) or ignored (the environment). `WingTests` fails when this table and the wings
/// differ.
package let knownWings: [(product: String, linkedType: String, keys: [String])] = [
    // First: the jar's link is above the cache's, whose key then sees the cookies.
    ("CourierCookies", "14CourierCookies10LinkedWingO", ["cookies", "cookieSuffixes"]),
    (
        "CourierCache", "12CourierCache10LinkedWingO",
        [
            "cache", "cache.memoryBytes", "cache.maxEntries", "cache.directory", "cache.maxBytes", "cache.maxEntryBytes",
            "cache.policy", "cache.maxStale",
        ]
    ),
]

/// The wings linked into this program, found once per process.
package let linkedWings: [any Wing.Type] = knownWings.compactMap { _typeByName($0.linkedType) as? any Wing.Type }

/// The keys of the wings this program does not link, with the product that brings each.
let unlinkedWingKeys: [String: String] = Dictionary(
    knownWings.filter { _typeByName($0.linkedType) == nil }.flatMap { wing in wing.keys.map { ($0, wing.product) } },
    uniquingKeysWith: { first, _ in first })

extension ConfigurationLoad {
    /// The error for a key of a wing this program does not link.
    func unlinked(_ key: String, product: String) -> ConfigurationError {
        error(key, nil, allowed: "a program that links the product \(product), whose key it is (add the product and `import \(product)`)")
    }

    /// Refuses the first variable of `environment` that sets a key of a wing this program does not link.
    func refuseUnlinkedWingKeys(in environment: [String: String]) throws(ConfigurationError) {
        for (key, product) in unlinkedWingKeys.sorted(by: { $0.key < $1.key }) {
            let variable = ConfigurationKey.environmentName(key)
            guard environment[variable] != nil else { continue }
            var failure = unlinked(key, product: product)
            failure.variable = variable
            throw failure
        }
    }
}

extension NetworkClient {
    /// The value a wing keeps for this client (see ``WingParts/value``); `nil` when the wing is off.
    package func wingValue<W: Wing>(_ wing: W.Type) -> (any Sendable)? {
        wingValues.first { $0.wing == ObjectIdentifier(wing) }?.value
    }
}
