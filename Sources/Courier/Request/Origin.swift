/// The web origin of a URL, `scheme://host:port` in lowercase with the default port filled in.
///
/// The chain uses it for one rule: credentials never follow a redirect to another origin (a
/// change of scheme, host or port); every layer compares origins the same way through this. Its
/// parts read an authority the client has already validated (a port that is not a number reads as
/// no port), so a transport uses them on a request's `authority`, never on text of its own.
public enum Origin {
    /// The origin of a request head's scheme (`http` when it names none) and authority, compared
    /// as text from the parts the client already resolved: no URL is written and parsed back.
    public static func of(scheme: String?, authority: String?) -> String {
        let scheme = (scheme ?? "http").lowercased()
        let (host, port) = hostAndPort(of: authority ?? "")
        return "\(scheme)://\(host):\(port ?? (scheme == "https" ? 443 : 80))"
    }

    /// The host (lowercase, IPv6 brackets kept, user info dropped) and the explicit port of an
    /// authority the client already built; never fails (a missing port is `nil`).
    public static func hostAndPort(of authority: String) -> (host: String, port: Int?) {
        var text = Substring(authority)
        if let at = text.lastIndex(of: "@") { text = text[text.index(after: at)...] }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let after = text[text.index(after: close)...]
            return (String(text[...close]).lowercased(), after.hasPrefix(":") ? Int(after.dropFirst()) : nil)
        }
        guard let colon = text.lastIndex(of: ":") else { return (text.lowercased(), nil) }
        return (text[..<colon].lowercased(), Int(text[text.index(after: colon)...]))
    }
}
