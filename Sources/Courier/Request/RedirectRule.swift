import Foundation

/// Courier's redirect policy, for transports whose own redirect handling is switched off (curl's
/// `CURLOPT_FOLLOWLOCATION`, AsyncHTTPClient's redirect configuration), so that their defaults
/// never decide what is sent where.
///
/// Pure: tested without a network.
package enum RedirectRule {
    /// The statuses that redirect, when the response has a `Location`.
    package static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// What to send next.
    package struct Next: Equatable, Sendable {
        /// The new request head.
        package var request: HTTPRequest
        /// Whether the body is sent again (307 and 308 keep it; the others switch to `GET`).
        package var keepsBody: Bool
    }

    /// Builds the request that follows a redirect.
    ///
    /// - 301 and 302 turn `POST` into `GET` (what browsers and every common client do); 303 turns
    ///   every method but `HEAD` into `GET`; 307 and 308 keep the method and the body.
    /// - When the body is dropped, so are its `Content-Type` and `Content-Length`.
    /// - When the origin (scheme, host or port) changes, `credentialHeaderNames` are dropped.
    ///
    /// - Parameters:
    ///   - request: The request that was redirected.
    ///   - status: The redirect status.
    ///   - location: The target URL; a relative one is resolved against the request's URL.
    ///   - credentialHeaderNames: Lowercase names never sent to another origin.
    /// - Returns: The next request.
    /// - Throws: ``NetworkError/Kind/invalidResponse`` for a target that is not an absolute `http`
    ///   or `https` URL.
    package static func follow(
        _ request: HTTPRequest, status: Int, location: String, credentialHeaderNames: Set<String>
    ) throws(NetworkError) -> Next {
        // A Location with spaces or control characters is not a URI reference: refuse it rather
        // than let URL parsing "repair" it into somewhere the server never named.
        let isWellFormed = !location.isEmpty && !location.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
        let base = URL(string: "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "/")")
        guard isWellFormed, let resolved = URL(string: location, relativeTo: base)?.absoluteURL,
            let target = URLComponents(url: resolved, resolvingAgainstBaseURL: false), let scheme = target.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = target.host, !host.isEmpty
        else {
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving, message: "the server redirected to an unusable location",
                status: status)
        }
        let method: HTTPRequest.Method
        switch status {
        case 303: method = request.method == .head ? .head : .get
        case 301, 302: method = request.method == .post ? .get : request.method
        default: method = request.method
        }
        let keepsBody = method == request.method && (status == 307 || status == 308)
        var fields = request.headerFields
        if !keepsBody {
            fields[.contentType] = nil
            fields[.contentLength] = nil
        }
        let authority = target.port.map { "\(hostForAuthority(host)):\($0)" } ?? hostForAuthority(host)
        if Origin.of(scheme: request.scheme, authority: request.authority) != Origin.of(scheme: scheme, authority: authority) {
            fields = HTTPFields(fields.filter { !credentialHeaderNames.contains($0.name.canonicalName) })
        }
        var path = target.percentEncodedPath.isEmpty ? "/" : target.percentEncodedPath
        if let query = target.percentEncodedQuery { path += "?" + query }
        let next = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: fields)
        return Next(request: next, keepsBody: keepsBody)
    }

    private static func hostForAuthority(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}
