import Courier

extension CurlTransport {
    /// Settings of one curl transport (one multi handle, its thread and its connection pool).
    ///
    /// Every limit has a finite default. The call's connect timeout, deadline and response-size
    /// limit come from the client's `ClientConfiguration` through the request context; the
    /// settings here are the ones only libcurl has. libcurl follows no redirect: the chain does.
    public struct Configuration: Sendable {
        /// The name reported in metrics and used by the registry; `curl` by default.
        public var name = "curl"
        /// The HTTP version used unless a call asks for another; `HTTPVersionPreference/http2`
        /// by default (HTTP/2 where TLS ALPN agrees, HTTP/1.1 otherwise).
        public var httpVersion: HTTPVersionPreference = .http2
        /// The most connections open at once, over all hosts; 256 by default. Transfers beyond it wait.
        public var maxConnections = 256
        /// The most connections open at once to one host; 64 by default. Transfers beyond it wait
        /// (over HTTP/2 they share a connection instead).
        public var maxConnectionsPerHost = 64
        /// The most idle connections kept for reuse; 256 by default.
        public var maxIdleConnections = 256
        /// The most concurrent streams opened on one HTTP/2 connection; 100 by default. When every
        /// connection to a host has this many (or the server's own limit), libcurl opens another,
        /// up to ``maxConnectionsPerHost``.
        public var maxConcurrentStreams = 100
        /// How long a connection is used for new transfers after it opened
        /// (`CURLOPT_MAXLIFETIME_CONN`); 5 minutes by default, so that a service sees DNS changes
        /// and a load balancer's new members. A connection past it finishes what it carries and is
        /// closed instead of reused. From 1 second to 1 day.
        public var maxConnectionLifetime: Duration = .seconds(300)
        /// A transfer slower than ``stallMinimumBytesPerSecond`` for this long fails as timed out
        /// ("stalled"); 30 seconds by default. Waiting for the response head counts as slow.
        public var stallTimeout: Duration = ClientConfiguration.defaultStallTimeout
        /// The speed below which a transfer counts as stalled; 1 byte per second by default.
        public var stallMinimumBytesPerSecond = 1
        /// How many response bytes may wait for a slow consumer of a streamed body before the
        /// transfer is paused (backpressure); 256 KiB by default (64 streams in flight hold at most
        /// 16 MiB between them). Reading resumes once half of it is
        /// consumed. A body the caller takes only whole is not held to it (it is gathered whole,
        /// bounded by the response size limit).
        public var responseBufferBytes = 256 << 10
        /// How many idle easy handles are kept for reuse; 128 by default.
        public var handlePoolSize = 128
        /// Certificate verification, custom trust, client certificates and pinning.
        public var tls = TLSOptions()
        /// The forward proxy; `ProxyConfiguration.none` by default, so libcurl never follows the
        /// environment's `http_proxy` on its own.
        ///
        /// It must be the client's own (`ClientConfiguration.proxy`): the chain reads that one, so a
        /// client refuses to start on a transport made with another.
        public var proxy = ProxyConfiguration.none
        /// A Unix socket every call connects to, and addresses that replace host names; none by
        /// default.
        /// Like ``proxy``, it must be the client's own.
        public var connectionOverrides = ConnectionOverrides.none

        /// The defaults.
        public init() {}

        /// Checks every value.
        /// - Throws: `ConfigurationError` naming the first value out of range.
        public func validate() throws(ConfigurationError) {
            func require(_ ok: Bool, _ key: String, _ value: some CustomStringConvertible, _ allowed: String) throws(ConfigurationError) {
                if !ok { throw ConfigurationError(key: "curl.\(key)", value: "\(value)", allowed: allowed, source: "code") }
            }
            try require((1...100_000).contains(maxConnections), "maxConnections", maxConnections, "1 to 100000")
            try require((1...100_000).contains(maxConnectionsPerHost), "maxConnectionsPerHost", maxConnectionsPerHost, "1 to 100000")
            try require((0...100_000).contains(maxIdleConnections), "maxIdleConnections", maxIdleConnections, "0 to 100000")
            try require((1...10_000).contains(maxConcurrentStreams), "maxConcurrentStreams", maxConcurrentStreams, "1 to 10000")
            try require(
                maxConnectionLifetime >= .seconds(1) && maxConnectionLifetime <= .seconds(86_400), "maxConnectionLifetime",
                maxConnectionLifetime, "1 s to 1 day")
            try require(
                stallTimeout >= .seconds(1) && stallTimeout <= .seconds(86_400), "stallTimeout", stallTimeout, "1 s to 1 day")
            try require(stallMinimumBytesPerSecond >= 1, "stallMinimumBytesPerSecond", stallMinimumBytesPerSecond, "at least 1")
            try require(
                (16 * 1024...(1 << 30)).contains(responseBufferBytes), "responseBufferBytes", responseBufferBytes, "16 KiB to 1 GiB")
            try require((0...100_000).contains(handlePoolSize), "handlePoolSize", handlePoolSize, "0 to 100000")
        }
    }

    /// How the transport trusts servers and identifies itself to them.
    ///
    /// Verification of the server's certificate and host name is always on unless code calls
    /// ``dangerouslyDisableCertificateVerification()``; no environment variable or configuration
    /// file can turn it off.
    public struct TLSOptions: Sendable {
        /// A PEM file of CA certificates to trust instead of the system's.
        public var caFile: String?
        /// PEM text of CA certificates to trust instead of the system's (held in memory).
        public var caPEM: String?
        /// A PEM client certificate, for servers that ask for one.
        public var clientCertificateFile: String?
        /// The PEM private key of ``clientCertificateFile``.
        public var clientKeyFile: String?
        /// The password of ``clientKeyFile``, if it is encrypted.
        public var clientKeyPassword: String?
        /// The server's public key must match: `sha256//BASE64` (several joined with `;`) or a PEM/DER file path.
        public var pinnedPublicKey: String?
        /// Whether certificate and host-name verification is off. Only
        /// ``dangerouslyDisableCertificateVerification()`` sets it.
        public private(set) var isVerificationDisabled = false

        /// Verification on, the system's trust store, no client certificate, no pinning.
        public init() {}

        /// Turns off certificate and host-name verification: anyone on the path can read and change
        /// the traffic. For local experiments only; never from configuration.
        public mutating func dangerouslyDisableCertificateVerification() {
            isVerificationDisabled = true
        }
    }
}

extension CurlTransport.Configuration {
    /// This configuration with the client configuration's transport settings on top: HTTP
    /// version, connection limits, stall timeout, TLS and the proxy. libcurl honours all of them.
    /// - Parameter client: The client configuration.
    /// - Returns: The combined configuration.
    public func applying(_ client: ClientConfiguration) -> Self {
        var combined = self
        if let version = client.httpVersion { combined.httpVersion = version }
        if let limit = client.maxConnections { combined.maxConnections = limit }
        if let limit = client.maxConnectionsPerHost { combined.maxConnectionsPerHost = limit }
        if let stall = client.stallTimeout { combined.stallTimeout = stall }
        let tls = client.tls
        if let value = tls.caFile { combined.tls.caFile = value }
        if let value = tls.caPEM { combined.tls.caPEM = value }
        if let value = tls.clientCertificateFile { combined.tls.clientCertificateFile = value }
        if let value = tls.clientKeyFile { combined.tls.clientKeyFile = value }
        if let value = tls.pinnedPublicKey { combined.tls.pinnedPublicKey = value }
        if !client.proxy.isNone { combined.proxy = client.proxy }
        if !client.connectionOverrides.isNone { combined.connectionOverrides = client.connectionOverrides }
        return combined
    }
}

extension CurlTransport.TLSOptions: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The fields that are set, by name; the key password and the CA text never appear.
    public var description: String {
        let set: [String] = [
            caFile.map { "caFile: \($0)" }, caPEM.map { _ in "caPEM: set" }, clientCertificateFile.map { "clientCertificateFile: \($0)" },
            clientKeyFile.map { "clientKeyFile: \($0)" }, clientKeyPassword.map { _ in "clientKeyPassword: \(Redaction.placeholder)" },
            pinnedPublicKey.map { "pinnedPublicKey: \($0)" }, isVerificationDisabled ? "verification: DISABLED" : nil,
        ].compactMap { $0 }
        return "TLSOptions(" + set.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    /// One child, the redacted ``description``: `dump` shows no password.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}
