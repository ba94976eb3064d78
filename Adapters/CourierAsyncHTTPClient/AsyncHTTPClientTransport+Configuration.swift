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
            /// ``NetworkError/Kind/unsupported``.
            public var httpVersion: HTTPVersionPreference = .http2
            /// How long opening a connection (TCP and TLS) may take.
            public var connectTimeout: Duration = .seconds(10)
            /// HTTP/1.1 connections per host (a soft limit, as AsyncHTTPClient has it).
            public var maxConnectionsPerHost = 64
            /// How long an idle connection stays open for reuse.
            public var idleTimeout: Duration = .seconds(60)
            /// A PEM bundle of extra roots to trust (the system roots are trusted as well).
            public var caPEM: String?
            /// A file of PEM roots to trust in addition to the system roots.
            public var caFile: String?

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
                if let caPEM, (try? NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))?.isEmpty ?? true {
                    throw refuse("caPEM", "(\(caPEM.utf8.count) bytes)", "one or more PEM certificates")
                }
            }
        }
    }
#endif
