/// The transports a program can select by name.
///
/// The core does not link any transport; each adapter module offers an ``Entry`` and the program
/// lists the ones it links:
///
/// ```swift
/// let registry = TransportRegistry([.urlSession(), .mock(myMock)])
/// let client = try NetworkClient(configuration: .load(), registry: registry)
/// ```
public struct TransportRegistry: Sendable {
    /// One selectable transport.
    public struct Entry: Sendable {
        /// The name configuration uses (`mock`, `urlsession`, `curl`, `ahc`).
        public var name: String
        /// Makes the transport for a client configuration.
        public var make: @Sendable (ClientConfiguration) throws -> any Transport

        /// Creates an entry.
        /// - Parameters:
        ///   - name: The name configuration uses; compared in lowercase.
        ///   - make: Makes the transport.
        public init(name: String, make: @escaping @Sendable (ClientConfiguration) throws -> any Transport) {
            self.name = name.lowercased()
            self.make = make
        }
    }

    /// Every transport name Courier knows, linked or not: ``preferredNames`` and `mock`.
    public static var knownNames: [String] { preferredNames + ["mock"] }

    /// The entries, in the order given.
    public let entries: [Entry]

    /// Creates a registry; a later entry with the same name replaces an earlier one.
    /// - Parameter entries: The transports this program links.
    public init(_ entries: [Entry]) {
        var seen: [String: Int] = [:]
        var unique: [Entry] = []
        for entry in entries {
            if let index = seen[entry.name] {
                unique[index] = entry
            } else {
                seen[entry.name] = unique.count
                unique.append(entry)
            }
        }
        self.entries = unique
    }

    /// The registered names, in order.
    public var names: [String] { entries.map(\.name) }

    /// Makes the transport the configuration names, or the preferred one (``defaultName``) when
    /// it names none.
    ///
    /// - Parameter configuration: The client configuration; its `transport` names the entry.
    /// - Returns: A new transport.
    /// - Throws: ``ConfigurationError`` for a name that is unknown or not linked into this program
    ///   (listing the names that are), for no name with an empty registry, or whatever the entry's
    ///   factory throws.
    public func makeTransport(for configuration: ClientConfiguration) throws -> any Transport {
        guard let name = configuration.transport?.lowercased() ?? defaultName else {
            throw ConfigurationError(
                key: ConfigurationKey.transport.name, value: nil,
                allowed: "a linked transport: add the CourierCurl product (or CourierAsyncHTTPClient, CourierURLSession) "
                    + "to the target, or list an entry in the registry",
                source: "configuration")
        }
        guard let entry = entries.first(where: { $0.name == name }) else {
            let allowed = names.isEmpty ? "none is linked" : names.joined(separator: ", ")
            let why = Self.knownNames.contains(name) ? " (\(name) is a Courier transport, but this program does not link it)" : ""
            throw ConfigurationError(key: ConfigurationKey.transport.name, value: name, allowed: allowed + why, source: "configuration")
        }
        return try entry.make(configuration)
    }
}
