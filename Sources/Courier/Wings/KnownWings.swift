import Foundation

/// The wings of this package: each one's product, the mangled name of its module's `LinkedWing`
/// enum (`O`; the runtime resolves the dotted form for classes only), the names of its keys and
/// which of them are sections, so that a key of a wing this program does not link is refused naming
/// the product instead of being unknown (a file) or ignored (the environment, a reader). The order is
/// the order of the wings' links. `WingTests` fails when this table and the wings differ.
package let knownWings: [(product: String, linkedType: String, keys: [String], sections: [String])] = [
    // First: the jar's link is above the cache's, whose key then sees the cookies.
    ("CourierCookies", "14CourierCookies10LinkedWingO", ["cookies", "cookieSuffixes"], []),
    // The breaker's and hedging's keys are the kernel's (their policies are `Resilience`'s); a
    // configuration that sets one without the wing is refused when a client is made.
    ("CourierResilience", "17CourierResilience10LinkedWingO", [], []),
    (
        "CourierCache", "12CourierCache10LinkedWingO",
        [
            "cache", "cache.memoryBytes", "cache.maxEntries", "cache.directory", "cache.maxBytes", "cache.maxEntryBytes",
            "cache.policy", "cache.maxStale",
        ],
        ["cache"]
    ),
]

/// Each known wing's type, when this program links it: the one lookup, once per process, that
/// ``linkedWings``, ``linkedProducts`` and ``ConfigurationKey/unlinked`` read.
private let foundWings: [(any Wing.Type)?] = knownWings.map { _typeByName($0.linkedType) as? any Wing.Type }

/// The wings linked into this program, in link order.
package let linkedWings: [any Wing.Type] = foundWings.compactMap { $0 }

/// The products of the wings linked into this program.
let linkedProducts: Set<String> = Set(zip(knownWings, foundWings).filter { $0.1 != nil }.map(\.0.product))

extension ConfigurationKey {
    /// A key of a wing this program does not link: a source that sets it fails naming the product.
    public struct Unlinked: Sendable {
        /// The key as a file nests it (`cache`, `cookies`).
        public let name: String
        /// The key a swift-configuration reader is asked for (`cache.enabled` for a section).
        public let readerKey: String
        /// The environment variable that sets it (`COURIER_CACHE_ENABLED` for a section).
        public let environmentVariable: String
        /// The product whose key it is (`CourierCache`).
        public let product: String

        /// The error for a value of this key from `source`: a program that sets it must link the
        /// product.
        public func refusal(source: String, variable: String? = nil) -> ConfigurationError {
            var error = ConfigurationError(
                key: name, value: nil,
                allowed: "a program that links the product \(product), whose key it is (add the product and `import \(product)`)",
                source: source)
            error.variable = variable
            return error
        }

        /// Whether a value in its text form only turns the key off (`false`, `0`, `no`, as a flag
        /// reads them): harmless without the wing, so one configuration can serve programs with
        /// and without it.
        public static func turnsOff(_ text: String) -> Bool {
            ["false", "0", "no"].contains(text.trimmingCharacters(in: .whitespaces).lowercased())
        }
    }

    /// The keys of the wings this program does not link (empty when it links them all): the
    /// loaders refuse them, and so should a reader of another configuration system.
    public static let unlinked: [Unlinked] = zip(knownWings, foundWings).filter { $0.1 == nil }.map(\.0).flatMap { wing in
        wing.keys.map { name in
            let dotted = wing.sections.contains(name) ? name + ".enabled" : name
            return Unlinked(
                name: name, readerKey: dotted, environmentVariable: ConfigurationKey.environmentName(dotted), product: wing.product)
        }
    }

    /// ``unlinked`` by name.
    static let unlinkedByName: [String: Unlinked] = Dictionary(unlinked.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
}

extension ConfigurationLoad {
    /// Refuses the first variable of `environment` that turns on a key of a wing this program does
    /// not link (`false` is let through).
    func refuseUnlinkedWingKeys(in environment: [String: String]) throws(ConfigurationError) {
        for key in ConfigurationKey.unlinked {
            guard let text = environment[key.environmentVariable], !ConfigurationKey.Unlinked.turnsOff(text) else { continue }
            throw key.refusal(source: source, variable: key.environmentVariable)
        }
    }
}

extension NetworkClient {
    /// The value a wing keeps for this client (see ``WingParts/value``); `nil` when the wing is off.
    package func wingValue<W: Wing>(_ wing: W.Type) -> (any Sendable)? {
        wingValues.first { $0.wing == ObjectIdentifier(wing) }?.value
    }

    /// Refuses a configuration whose settings no linked wing carries out: settings a wing's module
    /// set (``WingSettings/owners``) when the runtime did not find that wing, and the circuit
    /// breaker and hedging without `CourierResilience` (their policies are the kernel's
    /// `Resilience`).
    static func requireWings(for configuration: ClientConfiguration) throws(ConfigurationError) {
        let found = Set(linkedWings.map { ObjectIdentifier($0) })
        if let missing = configuration.wings.owners.first(where: { !found.contains($0.key) }) {
            throw ConfigurationError(
                key: missing.value, value: nil,
                allowed: "a wing the runtime finds: its module is linked, but its LinkedWing type was not found by name",
                source: "the configuration")
        }
        guard !linkedProducts.contains("CourierResilience") else { return }
        let key: ConfigurationKey? =
            configuration.resilience.circuitBreaker != nil ? .breaker : configuration.resilience.hedging != nil ? .hedging : nil
        guard let key else { return }
        throw ConfigurationError(
            key: key.name, value: nil,
            allowed: "a program that links the product CourierResilience (add it and `import CourierResilience`)",
            source: "code")
    }
}
