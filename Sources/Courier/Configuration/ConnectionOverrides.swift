import Foundation
import HTTPTypes

/// Where a client's connections go instead of where the URL's host name points: a Unix domain
/// socket for every call (a local Docker or sidecar daemon), or another address for some host
/// names (curl's `--connect-to`). Either way the request keeps its `Host` header, and an `https`
/// call verifies the certificate for the URL's host name.
///
/// ```swift
/// var configuration = ClientConfiguration(baseURL: "http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.41")
/// // the same as baseURL "http://localhost/v1.41" with connectionOverrides.unixSocket "/var/run/docker.sock"
/// configuration.connectionOverrides.addresses = ["api.internal": "10.0.0.7"]
/// ```
///
/// The curl transport honours both; AsyncHTTPClient both for plain http only (an https call with
/// either fails as ``NetworkError/Kind/unsupported``: SwiftNIO SSL would take a certificate for
/// the connected address whatever the name); URLSession neither, and refuses them at start-up
/// naming the key. The two do not combine, nor either with a proxy.
public struct ConnectionOverrides: Sendable, Hashable {
    /// The Unix domain socket every call connects to, or `nil`.
    public var unixSocket: String? = nil
    /// Host names (lowercase) and the address (an IP address, or another host name) calls to them
    /// connect to, on the URL's port.
    public var addresses: [String: String] = [:]

    /// No override: every call connects to its URL's host.
    public static let none = ConnectionOverrides()

    /// No override.
    public init() {}

    /// Whether nothing is overridden.
    public var isNone: Bool { unixSocket == nil && addresses.isEmpty }

    /// The configuration keys of what is set (`connections.unixSocket`, `connections.addresses`).
    public var setKeys: [String] {
        [
            unixSocket.map { _ in ConfigurationKey.connectionsUnixSocket.name },
            addresses.isEmpty ? nil : ConfigurationKey.connectionsAddresses.name,
        ].compactMap { $0 }
    }

    /// The longest socket path Linux takes (`sun_path` holds 108 bytes with its NUL).
    public static let maxSocketPathBytes = 107

    /// The address a request connects to instead of its host, or `nil`: the one fact every
    /// transport reads (the Unix socket is the other).
    /// - Parameter request: The request of one hop.
    /// - Returns: The address.
    public func address(for request: HTTPRequest) -> String? {
        guard !addresses.isEmpty else { return nil }
        var host = Origin.hostAndPort(of: request.authority ?? "").host
        if host.hasSuffix(".") { host.removeLast() }
        return addresses[host]
    }

    /// Checks the socket path and the addresses.
    /// - Parameter source: Where the values came from, for errors.
    /// - Throws: ``ConfigurationError`` naming `connections.unixSocket` or `connections.addresses`.
    public func validate(source: String = "code") throws(ConfigurationError) {
        if let unixSocket {
            guard unixSocket.hasPrefix("/"), unixSocket.utf8.count <= Self.maxSocketPathBytes,
                !unixSocket.unicodeScalars.contains(where: { $0.value < 0x20 })
            else {
                throw ConfigurationError(
                    key: ConfigurationKey.connectionsUnixSocket.name, value: unixSocket,
                    allowed: "an absolute path of at most \(Self.maxSocketPathBytes) bytes", source: source)
            }
        }
        for (host, address) in addresses.sorted(by: { $0.key < $1.key }) {
            guard case .success(let name) = RequestTarget.canonicalHost(host), name == host, !name.hasPrefix("["), !name.hasSuffix("."),
                case .success(let target) = RequestTarget.canonicalHost(address), target == address
            else {
                throw ConfigurationError(
                    key: ConfigurationKey.connectionsAddresses.name, value: "\(host)=\(address)",
                    allowed: "a lowercase host name without a trailing dot = an IP address in canonical form ([::1] for IPv6) "
                        + "or a lowercase host name, no port",
                    source: source)
            }
        }
        if unixSocket != nil, !addresses.isEmpty {
            throw ConfigurationError(
                key: ConfigurationKey.connectionsAddresses.name, value: nil,
                allowed: "no value with connections.unixSocket (every call goes to the socket)", source: source)
        }
    }

    /// Reads `host=address` entries (an IPv6 address in brackets or bare).
    static func addresses(from entries: [String], key: String, source: String) throws(ConfigurationError) -> [String: String] {
        var addresses: [String: String] = [:]
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            var address = parts.count == 2 ? parts[1] : ""
            if address.contains(":"), !address.hasPrefix("[") { address = "[\(address)]" }
            guard parts.count == 2, case .success(let host) = RequestTarget.canonicalHost(parts[0]), !host.hasPrefix("["),
                case .success(let canonical) = RequestTarget.canonicalHost(address)
            else {
                throw ConfigurationError(
                    key: key, value: entry, allowed: "host=address (an IP address or host name; no port)", source: source)
            }
            addresses[host.hasSuffix(".") ? String(host.dropLast()) : host] = canonical
        }
        return addresses
    }

    /// A base URL that names a Unix socket, `http+unix://<percent-encoded socket path>/<path>` (or
    /// `https+unix`), as the socket and the `http://localhost/<path>` calls are made to; `nil` for
    /// any other URL.
    static func unixSocketBase(_ url: String) -> (socket: String, base: String)? {
        let lowered = url.lowercased()
        guard let scheme = ["http+unix://", "https+unix://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        guard let socket = rest[..<end].removingPercentEncoding, !socket.isEmpty, !rest[..<end].contains("@") else { return nil }
        return (socket, scheme.replacingOccurrences(of: "+unix", with: "") + "localhost" + rest[end...])
    }
}
