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
    /// The client's retry budget per host (hedged copies draw from it).
    package let ledger: RetryBudgetLedger

    /// Whether the client has a retry link, which counts each call toward the budget (so a wing
    /// that draws from it must count them itself without one).
    package var hasRetry: Bool { configuration.retry != nil }
}

/// What a wing adds to one client.
package struct WingParts: Sendable {
    /// Once-per-call links, below retry (in the order of ``knownWings``, then of this list): the
    /// circuit breaker, hedging.
    package var outer: [any Middleware]
    /// A link around each hop: below redirect follow-up (each redirect is a hop) and above the
    /// bridge, in the order of ``knownWings`` (the cookie jar's, then the cache's, whose key then
    /// sees the cookies); named in ``NetworkClient/linkOrder`` by its type.
    package var hop: (any Middleware)?
    /// What the client keeps for the wing (the cookie jar), read with ``NetworkClient/wingValue(_:)``.
    package var value: (any Sendable)?

    package init(outer: [any Middleware] = [], hop: (any Middleware)? = nil, value: (any Sendable)? = nil) {
        self.outer = outer
        self.hop = hop
        self.value = value
    }
}
