import Foundation

/// TLS settings a client asks its transport for. Every field is optional; a transport that
/// cannot honour one that is set refuses to start with a ``ConfigurationError`` naming its key
/// (`tls.<field>`), so swapping transports never drops a setting silently.
///
/// Certificate verification cannot be turned off here: only the curl transport's own
/// `dangerouslyDisableCertificateVerification()`, in code, does that.
public struct TLSSettings: Sendable, Hashable {
    /// A file of PEM certificates to trust besides the system's roots.
    public var caFile: String?
    /// PEM certificates to trust besides the system's roots.
    public var caPEM: String?
    /// A PEM client certificate to present.
    public var clientCertificateFile: String?
    /// The PEM private key of the client certificate.
    public var clientKeyFile: String?
    /// The server's public key pin, `sha256//<base64 of the SHA-256 of the DER public key>`
    /// (several joined with `;`); a connection to any other key fails.
    public var pinnedPublicKey: String?

    /// No settings.
    public init() {}

    /// Whether nothing is set.
    public var isEmpty: Bool { self == TLSSettings() }

    /// The names of the fields that are set, as configuration keys (`tls.caFile`, …).
    public var setKeys: [String] {
        [
            (ConfigurationKey.tlsCAFile, caFile), (.tlsCAPEM, caPEM), (.tlsClientCertificateFile, clientCertificateFile),
            (.tlsClientKeyFile, clientKeyFile), (.tlsPinnedPublicKey, pinnedPublicKey),
        ].compactMap { $0.1 == nil ? nil : $0.0.name }
    }

    /// Checks the files exist and the values have their documented shapes.
    /// - Parameter source: Where the values came from, for errors.
    /// - Throws: ``ConfigurationError`` naming the key.
    public func validate(source: String = "code") throws(ConfigurationError) {
        for (key, path) in [
            (ConfigurationKey.tlsCAFile, caFile), (.tlsClientCertificateFile, clientCertificateFile), (.tlsClientKeyFile, clientKeyFile),
        ] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ConfigurationError(key: key.name, value: path, allowed: "the path of a readable PEM file", source: source)
            }
        }
        if let caPEM, !caPEM.contains("-----BEGIN CERTIFICATE-----") {
            throw ConfigurationError(
                key: ConfigurationKey.tlsCAPEM.name, value: nil, allowed: "one or more PEM certificates", source: source)
        }
        if (clientCertificateFile == nil) != (clientKeyFile == nil) {
            throw ConfigurationError(
                key: clientCertificateFile == nil ? ConfigurationKey.tlsClientCertificateFile.name : ConfigurationKey.tlsClientKeyFile.name,
                value: nil,
                allowed: "set together with "
                    + (clientCertificateFile == nil ? ConfigurationKey.tlsClientKeyFile : ConfigurationKey.tlsClientCertificateFile).name,
                source: source
            )
        }
        if let pinnedPublicKey {
            let pins = pinnedPublicKey.split(separator: ";", omittingEmptySubsequences: false)
            let wellFormed = pins.allSatisfy { pin in
                pin.hasPrefix("sha256//") && Data(base64Encoded: String(pin.dropFirst("sha256//".count)))?.count == 32
            }
            if !wellFormed {
                throw ConfigurationError(
                    key: ConfigurationKey.tlsPinnedPublicKey.name, value: pinnedPublicKey,
                    allowed: "sha256//<base64 SHA-256>, several joined with ;",
                    source: source)
            }
        }
    }
}

extension ClientConfiguration {
    /// The allowed range of ``maxConnections`` and ``maxConnectionsPerHost``.
    public static let connectionLimitRange: ClosedRange<Int> = 1...100_000
    /// The allowed range of ``stallTimeout``.
    public static let stallTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)

    /// The transport settings this configuration sets, as configuration keys: `httpVersion`,
    /// `connections.maxTotal`, `connections.maxPerHost`, `timeouts.stall` and the `tls.` keys,
    /// each when it is not `nil`, and `proxy` when a proxy is set. (`timeouts.connect` goes to every transport with each call:
    /// curl applies it per call, ahc when made from the configuration, and URLSession, which has no
    /// connect timeout of its own, bounds connecting by its stall limit.)
    public var transportSettingKeys: [String] {
        let optional: [(String, Bool)] = [
            (ConfigurationKey.httpVersion.name, httpVersion != nil), (ConfigurationKey.connectionsMaxTotal.name, maxConnections != nil),
            (ConfigurationKey.connectionsMaxPerHost.name, maxConnectionsPerHost != nil),
            (ConfigurationKey.timeoutsStall.name, stallTimeout != nil),
            (ConfigurationKey.proxy.name, !proxy.isNone),
        ]
        return optional.filter(\.1).map(\.0) + tls.setKeys + connectionOverrides.setKeys
    }

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

    /// Checks the transport settings (HTTP version needs none).
    func validateTransportSettings(source: String) throws(ConfigurationError) {
        for (key, limit) in [
            (ConfigurationKey.connectionsMaxTotal.name, maxConnections),
            (ConfigurationKey.connectionsMaxPerHost.name, maxConnectionsPerHost),
        ] {
            if let limit, !Self.connectionLimitRange.contains(limit) {
                throw ConfigurationError(key: key, value: "\(limit)", allowed: "1 to 100000", source: source)
            }
        }
        if let stallTimeout, !Self.stallTimeoutRange.contains(stallTimeout) {
            throw ConfigurationError(
                key: ConfigurationKey.timeoutsStall.name, value: "\(stallTimeout)", allowed: "1 to 86400 seconds", source: source)
        }
        try tls.validate(source: source)
        try connectionOverrides.validate(source: source)
        if !proxy.isNone, let key = connectionOverrides.setKeys.first {
            throw ConfigurationError(
                key: key, value: nil, allowed: "no value with a proxy (the proxy connects to the server itself)", source: source)
        }
    }
}
