import Foundation
import HTTPTypes

/// Courier's redirect rules, applied by the follow-up link of the chain (`FollowUpLink`) for every
/// transport: no transport follows a redirect on its own.
///
/// Pure: tested without a network.
package enum RedirectRule {
    /// Whether `status` redirects (301, 302, 303, 307 or 308), when the response has a `Location`.
    /// (A switch, not a `Set`: it runs on every response, and hashing costs more than the compare.)
    package static func redirects(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// What to send next.
    package struct Next: Equatable, Sendable {
        /// The new request head.
        package var request: HTTPRequest
        /// Whether the body is sent again: whenever the method is kept, except on 303.
        package var keepsBody: Bool
        /// Whether the hop changes the origin (scheme, host or port).
        package var crossesOrigin: Bool
    }

    /// Builds the request that follows a redirect.
    ///
    /// - 301 and 302 turn `POST` into `GET` (what browsers and every common client do); 303 turns
    ///   every method but `HEAD` into `GET`; every other method keeps its method and its body.
    /// - The next host is the `Location`'s host decoded once and checked by
    ///   ``RequestTarget/canonicalHost(_:)``; user info in the `Location` is dropped; the path's
    ///   `.` and `..` segments are resolved and stray characters encoded.
    /// - When the body is dropped, so is its `Content-Type` (no request carries `Content-Length`:
    ///   framing is the transport's).
    /// - When the origin (scheme, host or port) changes, only ``FollowUp/crossOriginSafelist``
    ///   headers are kept, less any of `credentialNames`.
    ///
    /// - Parameters:
    ///   - request: The request that was redirected.
    ///   - status: The redirect status.
    ///   - location: The `Location` value; a relative one is resolved against the request's URL.
    ///   - credentialNames: Lowercase names never sent to another origin, even when safelisted: the
    ///     call's ``RequestContext/credentialHeaderNames``.
    /// - Returns: The next request.
    /// - Throws: ``NetworkError/Kind/redirectRefused`` for a scheme other than `http` and `https`
    ///   and for `https` to `http`; ``NetworkError/Kind/invalidResponse`` for a `Location` that is
    ///   not a usable URI reference (control characters, an encoded CR, LF or NUL, no host).
    package static func follow(
        _ request: HTTPRequest, status: Int, location: String, credentialNames: Set<String> = CredentialScope.standardNames
    ) throws(NetworkError) -> Next {
        guard isWellFormed(location) else {
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving,
                message: "the server redirected to a Location with control characters or an encoded CR, LF or NUL", status: status)
        }
        let fromScheme = (request.scheme ?? "http").lowercased()
        let base = URL(string: request.urlText)
        guard let resolved = URL(string: location, relativeTo: base)?.absoluteURL,
            let target = URLComponents(url: resolved, resolvingAgainstBaseURL: false), let scheme = target.scheme?.lowercased()
        else {
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving, message: "the server redirected to an unusable location", status: status)
        }
        guard scheme == "http" || scheme == "https" else {
            throw NetworkError(
                kind: .redirectRefused, phase: .receiving,
                message: "the server redirected to a \(String(scheme.prefix(32))): URL; only http and https are followed",
                status: status)
        }
        guard !(fromScheme == "https" && scheme == "http") else {
            throw NetworkError(
                kind: .redirectRefused, phase: .receiving, message: "the server redirected from https to plain http", status: status)
        }
        // The host as the server wrote it, decoded once, must be a plain name or IP literal: the
        // text the origin check compares is then the text every transport connects to.
        guard let encodedHost = target.percentEncodedHost, !encodedHost.isEmpty else {
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving, message: "the server redirected to a URL without a host", status: status)
        }
        let host: String
        switch RequestTarget.canonicalHost(encodedHost.removingPercentEncoding ?? "%") {
        case .success(let value): host = value
        case .failure(let problem):
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving,
                message: "the server redirected to a host that is not a host name or IP literal (\(problem.reason))", status: status)
        }
        if let port = target.port, !(1...65_535).contains(port) {
            throw NetworkError(
                kind: .invalidResponse, phase: .receiving, message: "the server redirected to port \(port), outside 1 to 65535",
                status: status)
        }
        let method: HTTPRequest.Method
        switch status {
        case 303: method = request.method == .head ? .head : .get
        case 301, 302: method = request.method == .post ? .get : request.method
        default: method = request.method
        }
        // A request that keeps its method keeps its meaning, so its body goes again (a PUT moved by
        // 301 is still a PUT with its body); 303 always asks for the other resource without one.
        let keepsBody = status != 303 && method == request.method
        var fields = request.headerFields
        if !keepsBody {
            fields[.contentType] = nil
        }
        // User info in the Location is never carried: the authority is the host and the port alone.
        let authority = target.port.map { "\(host):\($0)" } ?? host
        let crossesOrigin =
            Origin.of(scheme: request.scheme, authority: request.authority) != Origin.of(scheme: scheme, authority: authority)
        if crossesOrigin {
            fields = HTTPFields(
                fields.filter {
                    let name = $0.name.canonicalName
                    return FollowUp.crossOriginSafelist.contains(name) && !credentialNames.contains(name)
                })
        }
        var path = RequestTarget.removingDotSegments(RequestTarget.encodingStray(target.percentEncodedPath, inQuery: false))
        if let query = target.percentEncodedQuery { path += "?" + RequestTarget.encodingStray(query, inQuery: true) }
        let next = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: fields)
        return Next(request: next, keepsBody: keepsBody, crossesOrigin: crossesOrigin)
    }

    /// A `Location` with spaces or control characters is not a URI reference, and one with an
    /// encoded CR, LF or NUL is built to smuggle a header or a request line through a server that
    /// decodes it: refuse both rather than let URL parsing "repair" them.
    static func isWellFormed(_ location: String) -> Bool {
        let bytes = Array(location.utf8)
        guard !bytes.isEmpty, bytes.count <= 8192 else { return false }
        for (index, byte) in bytes.enumerated() {
            if byte <= 0x20 || byte == 0x7F { return false }
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "0") {
                switch bytes[index + 2] | 0x20 {
                case UInt8(ascii: "0"), UInt8(ascii: "a"), UInt8(ascii: "d"): return false
                default: break
                }
            }
        }
        return true
    }
}
