#if AsyncHTTPClient
    import Courier
    import Foundation
    import NIOSSL

    extension AsyncHTTPClientTransport {
        /// Settings of an ``AsyncHTTPClientTransport``. Every default is finite.
        public struct Configuration: Sendable {
            /// The registered name, `ahc` by default.
            public var name = "ahc"
            /// HTTP/2 over TLS when the server offers it (ALPN), or HTTP/1.1 only. Cleartext HTTP/2
            /// with prior knowledge is not something AsyncHTTPClient does: such calls fail as
            /// `NetworkError/Kind/unsupported`.
            public var httpVersion: HTTPVersionPreference = .http2
            /// How long opening a connection (TCP and TLS) may take.
            public var connectTimeout: Duration = ClientConfiguration.defaultConnectTimeout
            /// HTTP/1.1 connections per host (a soft limit, as AsyncHTTPClient has it).
            public var maxConnectionsPerHost = 64
            /// How long an idle connection stays open for reuse.
            public var idleTimeout: Duration = .seconds(60)
            /// A PEM bundle of extra roots to trust (the system roots are trusted as well).
            public var caPEM: String?
            /// A file of PEM roots to trust in addition to the system roots.
            public var caFile: String?
            /// A PEM client certificate to present (with ``clientKeyFile``).
            public var clientCertificateFile: String?
            /// The PEM private key of ``clientCertificateFile``.
            public var clientKeyFile: String?
            /// How long a connection may go without a byte read before the call fails as
            /// `NetworkError/Kind/timedOut` (AsyncHTTPClient's read timeout): 30 s by default.
            public var stallTimeout: Duration = ClientConfiguration.defaultStallTimeout
            /// The forward proxy; `ProxyConfiguration.none` by default. AsyncHTTPClient tunnels
            /// every call through it with `CONNECT`, plain http too (it has no forwarding mode).
            ///
            /// It must be the client's own (`ClientConfiguration.proxy`): the chain reads that one, so a
            /// client refuses to start on a transport made with another.
            public var proxy = ProxyConfiguration.none
            /// A Unix socket every call connects to (plain http only), and addresses that replace
            /// host names (AsyncHTTPClient's `dnsOverride`); none by default.
            /// Like ``proxy``, it must be the client's own.
            public var connectionOverrides = ConnectionOverrides.none

            /// The default settings.
            public init() {}

            /// Checks every value; throws naming the key.
            public func validate() throws(ConfigurationError) {
                func refuse(_ key: String, _ value: String, _ allowed: String) -> ConfigurationError {
                    ConfigurationError(key: "ahc.\(key)", value: value, allowed: allowed, source: "code")
                }
                guard !name.isEmpty else { throw refuse("name", name, "a non-empty name") }
                guard connectTimeout > .zero, connectTimeout <= .seconds(3600) else {
                    throw refuse("connectTimeout", "\(connectTimeout)", "more than 0 and at most 3600 seconds")
                }
                guard (1...1024).contains(maxConnectionsPerHost) else {
                    throw refuse("maxConnectionsPerHost", "\(maxConnectionsPerHost)", "1 to 1024")
                }
                guard idleTimeout > .zero, idleTimeout <= .seconds(3600) else {
                    throw refuse("idleTimeout", "\(idleTimeout)", "more than 0 and at most 3600 seconds")
                }
                if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                    throw refuse("caFile", caFile, "a readable file of PEM certificates")
                }
                guard stallTimeout >= .seconds(1), stallTimeout <= .seconds(86_400) else {
                    throw refuse("stallTimeout", "\(stallTimeout)", "1 s to 1 day")
                }
                for (key, path) in [("clientCertificateFile", clientCertificateFile), ("clientKeyFile", clientKeyFile)] {
                    if let path, !FileManager.default.isReadableFile(atPath: path) { throw refuse(key, path, "a readable PEM file") }
                }
                if (clientCertificateFile == nil) != (clientKeyFile == nil) {
                    throw refuse("clientCertificateFile", "", "set together with clientKeyFile")
                }
                if let caPEM, (try? NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))?.isEmpty ?? true {
                    throw refuse("caPEM", "(\(caPEM.utf8.count) bytes)", "one or more PEM certificates")
                }
            }
        }
    }
    extension AsyncHTTPClientTransport.Configuration {
        /// This configuration with the client configuration's transport settings on top.
        ///
        /// AsyncHTTPClient has no total connection limit, no public key pinning and no cleartext
        /// HTTP/2: those settings make it refuse to start, naming the key.
        /// - Parameter client: The client configuration.
        /// - Returns: The combined configuration.
        /// - Throws: `ConfigurationError` for a setting AsyncHTTPClient cannot honour.
        public func applying(_ client: ClientConfiguration) throws(ConfigurationError) -> Self {
            var combined = self
            // The client's connect timeout when it sets one; at its default, this transport's own.
            if client.connectTimeout != ClientConfiguration.defaultConnectTimeout { combined.connectTimeout = client.connectTimeout }
            if let version = client.httpVersion {
                guard version != .http2PriorKnowledge else {
                    throw ClientConfiguration.unsupported(
                        ConfigurationKey.httpVersion.name, value: "\(version)", by: name,
                        "AsyncHTTPClient does not speak cleartext HTTP/2; use curl")
                }
                combined.httpVersion = version
            }
            if let limit = client.maxConnections {
                throw ClientConfiguration.unsupported(
                    ConfigurationKey.connectionsMaxTotal.name, value: "\(limit)", by: name,
                    "AsyncHTTPClient limits connections per host only (connections.maxPerHost)")
            }
            if let limit = client.maxConnectionsPerHost {
                guard limit <= 1024 else {
                    throw ClientConfiguration.unsupported(
                        ConfigurationKey.connectionsMaxPerHost.name, value: "\(limit)", by: name,
                        "AsyncHTTPClient keeps at most 1024 connections per host")
                }
                combined.maxConnectionsPerHost = limit
            }
            if let stall = client.stallTimeout { combined.stallTimeout = stall }
            let tls = client.tls
            if tls.pinnedPublicKey != nil {
                throw ClientConfiguration.unsupported(
                    ConfigurationKey.tlsPinnedPublicKey.name, by: name, "AsyncHTTPClient cannot pin a public key; use curl")
            }
            if let value = tls.caFile { combined.caFile = value }
            if let value = tls.caPEM { combined.caPEM = value }
            if let value = tls.clientCertificateFile { combined.clientCertificateFile = value }
            if let value = tls.clientKeyFile { combined.clientKeyFile = value }
            if !client.proxy.isNone { combined.proxy = client.proxy }
            if !client.connectionOverrides.isNone { combined.connectionOverrides = client.connectionOverrides }
            return combined
        }
    }
#endif
