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
