import Foundation
import HTTPTypes

@testable import Courier

/// The redirect rule, fed any `Location`, with its security properties checked on every input
/// that is followed (a crash reports the input that breaks one):
/// - the next request passes the target rule a transport relies on (`RequestTarget`);
/// - the host a URL parser finds in the next request's URL text (what the URLSession and
///   AsyncHTTPClient transports parse, and curl's URL is the same text) is the host the origin check
///   compared;
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
            let sameOrigin = Origin.of(scheme: hop.scheme, authority: hop.authority) == Origin.of(scheme: "https", authority: "api.test:8443")
            precondition(sameOrigin == !next.crossesOrigin, "crossesOrigin is wrong for \(location.debugDescription)")
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
}
