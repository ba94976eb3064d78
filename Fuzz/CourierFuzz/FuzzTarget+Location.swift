import CCurl
import Foundation
import HTTPTypes

@testable import Courier

/// The redirect rule, fed any `Location`, with its security properties checked on every input
/// that is followed (a crash reports the input that breaks one):
/// - the next request passes the target rule a transport relies on (`RequestTarget`);
/// - the host each URL parser finds in the next request's URL text is the host the origin check
///   compared: Foundation's (what the URLSession and AsyncHTTPClient transports parse) and
///   libcurl's (`curl_url`, what the curl transport and FoundationNetworking's libcurl parse),
///   whose path is also the path sent (nothing for it to resolve);
/// - a header outside the cross-origin safelist, and any credential, reaches the next request only
///   when its origin (scheme, host, port) is the original one.
extension FuzzTarget {
    static let location = FuzzTarget(name: "location") { bytes in
        let location = String(decoding: bytes, as: UTF8.self)
        var fields = HTTPFields()
        for (name, value) in [
            ("Authorization", "Bearer a"), ("Cookie", "c=1"), ("X-Api-Key", "k"), ("X-Key", "s"), ("X-Custom", "x"),
            ("Accept", "application/json"), ("Baggage", "user=u"), ("Content-Type", "text/plain"),
        ] {
            fields.append(HTTPField(name: HTTPField.Name(name)!, value: value))
        }
        let request = HTTPRequest(method: .put, scheme: "https", authority: "api.test:8443", path: "/a/b?c=d", headerFields: fields)
        let credentials = CredentialScope.standardNames.union(["x-key"])
        for status in [302, 307] {
            guard let next = try? RedirectRule.follow(request, status: status, location: location, credentialNames: credentials) else {
                continue
            }
            let hop = next.request
            if let problem = RequestTarget.problem(in: hop) {
                preconditionFailure("a followed Location fails the target rule: \(location.debugDescription): \(problem.message)")
            }
            let checked = Origin.hostAndPort(of: hop.authority ?? "")
            guard let parsed = URLComponents(string: hop.urlText), let parsedHost = parsed.host else {
                preconditionFailure("the next request's URL does not parse: \(hop.urlText.debugDescription)")
            }
            let bare = checked.host.hasPrefix("[") ? String(checked.host.dropFirst().dropLast()) : checked.host
            let parsedBare = parsedHost.hasPrefix("[") ? String(parsedHost.dropFirst().dropLast()) : parsedHost
            precondition(
                parsedBare.lowercased() == bare && parsed.port == checked.port,
                "the origin check saw \(checked) but a parser connects to \(parsedHost):\(parsed.port.map(String.init) ?? "-") for \(location.debugDescription)"
            )
            precondition(parsed.user == nil && parsed.password == nil, "user info reached the next request: \(hop.urlText)")
            checkWithLibcurl(hop, host: checked.host, port: checked.port, location: location)
            // Compared by hand: scheme, host (as the transports parse it) and port, defaults filled in.
            let hopPort = parsed.port ?? (hop.scheme == "https" ? 443 : 80)
            let sameOrigin = hop.scheme == "https" && parsedBare.lowercased() == "api.test" && hopPort == 8443
            if !sameOrigin {
                for field in hop.headerFields {
                    let name = field.name.canonicalName
                    precondition(
                        FollowUp.crossOriginSafelist.contains(name) && !credentials.contains(name),
                        "\(name) reached another origin (\(hop.urlText)) for \(location.debugDescription)")
                }
            }
        }
    }

    /// The next request's URL as libcurl parses it: the same host, port and path as checked.
    static func checkWithLibcurl(_ hop: HTTPRequest, host: String, port: Int?, location: String) {
        guard let handle = curl_url() else { return }
        defer { curl_url_cleanup(handle) }
        let code = hop.urlText.withCString { curl_url_set(handle, CURLUPART_URL, $0, 0) }
        precondition(code == CURLUE_OK, "libcurl refuses the next request's URL \(hop.urlText.debugDescription) (\(code))")
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        let curlHost = part(CURLUPART_HOST)?.lowercased()
        precondition(
            curlHost == host, "libcurl connects to \(curlHost ?? "-") where the origin check saw \(host), for \(location.debugDescription)")
        precondition(part(CURLUPART_PORT).flatMap { Int($0) } == port, "libcurl's port differs for \(location.debugDescription)")
        precondition(part(CURLUPART_USER) == nil, "libcurl finds user info in \(hop.urlText)")
        let path = String((hop.path ?? "/").prefix { $0 != "?" })
        precondition(part(CURLUPART_PATH) == path, "libcurl reads the path \(part(CURLUPART_PATH) ?? "-") where \(path) is sent")
    }
}
