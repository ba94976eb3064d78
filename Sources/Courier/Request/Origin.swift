import Foundation

/// The web origin of a URL, `scheme://host:port` in lowercase with the default port filled in.
///
/// Transports use it for one rule: credentials never follow a redirect to another origin (a
/// change of scheme, host or port). Every transport compares origins the same way through this.
package enum Origin {
    /// The origin of `url`, or an empty string when it has no scheme or host.
    package static func of(_ url: URL?) -> String {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return "" }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// The origin of a request head's scheme and authority (`http` when it names no scheme).
    package static func of(scheme: String?, authority: String?) -> String {
        of(URL(string: "\(scheme ?? "http")://\(authority ?? "")/"))
    }
}
