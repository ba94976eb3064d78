import Foundation

/// The transport settings a client's configuration asks for (HTTP version, connection limits,
/// stall timeout, TLS, proxy, connection overrides), resolved once from it
/// (``ClientConfiguration/transportSettings``), and the one "settings never vanish" check.
///
/// A transport states, in these terms, what it runs with (``Transport/runningSettings``) and which
/// keys it carries out (``Transport/honouredSettingKeys``); the default
/// ``Transport/checkSettings(of:)`` then runs ``check(running:honoured:skipping:by:)``: a key the
/// configuration sets that the transport does not carry out is refused, naming it, and one it
/// carries out must have the value the configuration asks for. The one table of keys is
/// `rows`: a new transport setting is a key entry, a property here, its row, and each honouring
/// transport's use.
public struct TransportSettings: Sendable, Hashable {
    /// The HTTP version; `nil` keeps the transport's default.
    public var httpVersion: HTTPVersionPreference?
    /// The most connections in all; `nil` keeps the transport's default.
    public var maxConnections: Int?
    /// The most connections to one host; `nil` keeps the transport's default.
    public var maxConnectionsPerHost: Int?
    /// How long a transfer may receive nothing; `nil` keeps the transport's default.
    public var stallTimeout: Duration?
    /// Trusted roots, a client certificate, a public key pin.
    public var tls = TLSSettings()
    /// The forward proxy: the client's decision, which the chain reads too (its `407` rule).
    public var proxy = ProxyConfiguration.none
    /// A Unix socket or fixed addresses to connect to instead of the URL's host.
    public var connectionOverrides = ConnectionOverrides.none

    /// No settings: every transport default.
    public init() {}

    /// One key of the table: whether a configuration sets it, and whether two settings agree on it.
    struct Row: Sendable {
        let key: String
        let isSet: @Sendable (TransportSettings) -> Bool
        let same: @Sendable (TransportSettings, TransportSettings) -> Bool
        /// Compared whether set or not: the client's own decision (no proxy, no override) is one
        /// a transport that carries the key out must share.
        var always = false
    }

    /// Every transport setting, once.
    static let rows: [Row] = [
        Row(key: ConfigurationKey.httpVersion.name, isSet: { $0.httpVersion != nil }, same: { $0.httpVersion == $1.httpVersion }),
        Row(
            key: ConfigurationKey.connectionsMaxTotal.name, isSet: { $0.maxConnections != nil },
            same: { $0.maxConnections == $1.maxConnections }),
        Row(
            key: ConfigurationKey.connectionsMaxPerHost.name, isSet: { $0.maxConnectionsPerHost != nil },
            same: { $0.maxConnectionsPerHost == $1.maxConnectionsPerHost }),
        Row(key: ConfigurationKey.timeoutsStall.name, isSet: { $0.stallTimeout != nil }, same: { $0.stallTimeout == $1.stallTimeout }),
        Row(key: ConfigurationKey.proxy.name, isSet: { !$0.proxy.isNone }, same: { $0.proxy == $1.proxy }, always: true),
        Row(key: ConfigurationKey.tlsCAFile.name, isSet: { $0.tls.caFile != nil }, same: { $0.tls.caFile == $1.tls.caFile }),
        Row(key: ConfigurationKey.tlsCAPEM.name, isSet: { $0.tls.caPEM != nil }, same: { $0.tls.caPEM == $1.tls.caPEM }),
        Row(
            key: ConfigurationKey.tlsClientCertificateFile.name, isSet: { $0.tls.clientCertificateFile != nil },
            same: { $0.tls.clientCertificateFile == $1.tls.clientCertificateFile }),
        Row(
            key: ConfigurationKey.tlsClientKeyFile.name, isSet: { $0.tls.clientKeyFile != nil },
            same: { $0.tls.clientKeyFile == $1.tls.clientKeyFile }),
        Row(
            key: ConfigurationKey.tlsPinnedPublicKey.name, isSet: { $0.tls.pinnedPublicKey != nil },
            same: { $0.tls.pinnedPublicKey == $1.tls.pinnedPublicKey }),
        Row(
            key: ConfigurationKey.connectionsUnixSocket.name, isSet: { $0.connectionOverrides.unixSocket != nil },
            same: { $0.connectionOverrides.unixSocket == $1.connectionOverrides.unixSocket }, always: true),
        Row(
            key: ConfigurationKey.connectionsAddresses.name, isSet: { !$0.connectionOverrides.addresses.isEmpty },
            same: { $0.connectionOverrides.addresses == $1.connectionOverrides.addresses }, always: true),
    ]

    /// Every transport setting key, in the table's order.
    public static var allKeys: [String] { rows.map(\.key) }

    /// The keys these settings set, in the table's order.
    public var setKeys: [String] { Self.rows.filter { $0.isSet(self) }.map(\.key) }

    /// Checks that a transport running with `running`, which carries out the keys `honoured`, does
    /// what these settings ask: the one "settings never vanish" check.
    /// - Parameters:
    ///   - running: What the transport runs with, in these terms.
    ///   - honoured: The keys it carries out.
    ///   - skipping: Keys the transport has checked by a rule of its own (URLSession's proxy, which
    ///     only the environment sets).
    ///   - transport: The transport's name, for the error.
    /// - Throws: ``ConfigurationError`` naming the first key set but not carried out
    ///   (``ClientConfiguration/unsupported(_:value:by:_:)``), or carried out with another value
    ///   (``ClientConfiguration/notCarriedOut(_:by:)``).
    public func check(
        running: TransportSettings, honoured: Set<String>, skipping: Set<String> = [], by transport: String
    ) throws(ConfigurationError) {
        for row in Self.rows where !skipping.contains(row.key) {
            let asked = row.isSet(self)
            guard honoured.contains(row.key) else {
                if asked {
                    throw ClientConfiguration.unsupported(
                        row.key, by: transport, "this transport does not read the client configuration's \(row.key)")
                }
                continue
            }
            if asked || row.always, !row.same(self, running) { throw ClientConfiguration.notCarriedOut(row.key, by: transport) }
        }
    }
}

extension ClientConfiguration {
    /// The allowed range of ``maxConnections`` and ``maxConnectionsPerHost``.
    public static let connectionLimitRange: ClosedRange<Int> = 1...100_000
    /// The allowed range of ``stallTimeout``.
    public static let stallTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)

    /// This configuration's transport settings, resolved once (see ``TransportSettings``).
    public var transportSettings: TransportSettings {
        var settings = TransportSettings()
        settings.httpVersion = httpVersion
        settings.maxConnections = maxConnections
        settings.maxConnectionsPerHost = maxConnectionsPerHost
        settings.stallTimeout = stallTimeout
        settings.tls = tls
        settings.proxy = proxy
        settings.connectionOverrides = connectionOverrides
        return settings
    }

    /// The transport settings this configuration sets, as configuration keys
    /// (``TransportSettings/setKeys``): `httpVersion`, `connections.maxTotal`,
    /// `connections.maxPerHost`, `timeouts.stall` and the `tls.` keys, each when it is not `nil`,
    /// `proxy` when a proxy is set, and the `connections.` overrides. (`timeouts.connect` goes to
    /// every transport with each call: curl applies it per call, ahc when made from the
    /// configuration, and URLSession, which has no connect timeout of its own, bounds connecting
    /// by its stall limit.)
    public var transportSettingKeys: [String] { transportSettings.setKeys }

    /// The error a transport made in code gives for a setting the configuration sets to a value
    /// it was not made with.
    /// - Parameters:
    ///   - key: The configuration key.
    ///   - transport: The transport's name.
    /// - Returns: The error, from source `configuration`.
    public static func notCarriedOut(_ key: String, by transport: String) -> ConfigurationError {
        ConfigurationError(
            key: key, value: nil,
            allowed: "the value the \(transport) transport was made with: it was made in code with another; "
                + "make it from this configuration (a TransportRegistry entry, or its Configuration's applying(_:)), "
                + "or leave the key unset",
            source: "configuration")
    }

    /// The error a transport gives for a setting it cannot honour.
    /// - Parameters:
    ///   - key: The configuration key, for example `tls.pinnedPublicKey`.
    ///   - value: The value, when it is not a secret.
    ///   - transport: The transport's name.
    ///   - reason: Why, and what to use instead.
    /// - Returns: The error, from source `configuration`.
    public static func unsupported(_ key: String, value: String? = nil, by transport: String, _ reason: String) -> ConfigurationError {
        ConfigurationError(key: key, value: value, allowed: "no value with the \(transport) transport: \(reason)", source: "configuration")
    }

    /// Checks what the key table's ranges cannot say of the transport settings: TLS files and
    /// pins, the connection overrides, and no override with a proxy.
    func validateTransportSettings(source: String) throws(ConfigurationError) {
        try tls.validate(source: source)
        try connectionOverrides.validate(source: source)
        if !proxy.isNone, let key = connectionOverrides.setKeys.first {
            throw ConfigurationError(
                key: key, value: nil, allowed: "no value with a proxy (the proxy connects to the server itself)", source: source)
        }
    }
}
