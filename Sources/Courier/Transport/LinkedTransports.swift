/// How the core finds the transports linked into the program without depending on them.
///
/// Each transport module declares one `LinkedEntry` type conforming to this protocol. Swift has
/// no load-time registration, so the core looks those types up by name in the runtime's type
/// metadata, once per process (as it finds `CourierXML`; see `XMLDecodingHook`): a type is found
/// exactly when its module is linked into the program, with nothing to call at start-up.
package protocol LinkedTransport {
    /// The module's registry entry, with the transport's default settings.
    static var entry: TransportRegistry.Entry { get }
}

extension TransportRegistry {
    /// The transports a configuration that names none chooses from, in order, each with the
    /// mangled name of its module's `LinkedEntry` enum (`O`; the runtime resolves the dotted
    /// `Module.Name` form for classes only): the fastest that a server cannot crash first.
    /// `urlsession` comes last because FoundationNetworking traps on some malformed answers (see
    /// `URLSessionTransport`). `DefaultTransportTests.mangledNames` fails if a type is renamed
    /// without this table.
    package static let preferred: [(name: String, linkedType: String)] = [
        ("curl", "11CourierCurl11LinkedEntryO"), ("ahc", "22CourierAsyncHTTPClient11LinkedEntryO"),
        ("urlsession", "17CourierURLSession11LinkedEntryO"),
    ]

    /// The transport names a configuration that names none chooses from, in order of preference:
    /// `curl`, `ahc`, `urlsession`.
    public static var preferredNames: [String] { preferred.map(\.name) }

    /// Every transport linked into this program (`curl`, `ahc` with the `AsyncHTTPClient` trait,
    /// `urlsession`), each with its default settings: the registry of `NetworkClient(baseURL:)`
    /// and `NetworkClient(configuration:)`. Found once per process.
    ///
    /// A program that links `CourierCurl` needs no list of its own:
    ///
    /// ```swift
    /// let client = try NetworkClient(configuration: .load(defaults: ClientConfiguration(baseURL: "https://api.example.com")))
    /// ```
    public static let linked = TransportRegistry(
        preferred.compactMap { (_typeByName($0.linkedType) as? any LinkedTransport.Type)?.entry })

    /// The entry a configuration that names no transport gets: the first of ``preferredNames``
    /// this registry has, else its first entry; `nil` for an empty registry.
    public var defaultName: String? {
        Self.preferredNames.first { names.contains($0) } ?? names.first
    }
}
