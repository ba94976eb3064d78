import HTTPTypes
import Logging

/// Courier's redirect policy, the same for every transport: the chain's follow-up link applies it,
/// and no transport follows a redirect on its own.
///
/// - At most ``ClientConfiguration/maxRedirects`` hops (10 by default); the deadline covers them all.
/// - Only `http` and `https` targets, and never from `https` down to `http`: anything else fails
///   with ``NetworkError/Kind/redirectRefused`` and nothing is sent to the target.
/// - 301 and 302 turn only `POST` into `GET`, 303 turns every method but `HEAD` into `GET` (the
///   body is dropped); every other method keeps its method and its body, which is sent again. A
///   body that cannot be read twice fails the call as ``NetworkError/Kind/redirectRefused``.
/// - The next host is the `Location`'s host decoded once and checked as a host name or IP literal
///   (`%2F`, `%40`, `%23`, `%3F`, `%5C`, `%3A`, `%25`, `%00` and non-ASCII are refused as
///   ``NetworkError/Kind/invalidResponse``); user info in a `Location` is never carried.
/// - A hop to another origin (scheme, host or port) carries only the headers named in
///   ``crossOriginSafelist``, less every credential header
///   (``RequestContext/credentialHeaderNames``); same-origin hops keep every header. Network
///   middleware then sees ``RequestContext/hasCrossedOrigin``.
/// - A `Location` with control characters or an encoded CR, LF or NUL is refused as
///   ``NetworkError/Kind/invalidResponse``.
/// - Each hop counts in ``RequestMetrics/redirects`` and ``RequestMetrics/attempts``, and is
///   logged at `debug` as `courier.redirect.followed`.
public enum FollowUp {
    /// The headers (lowercase names) a redirect to another origin keeps: content negotiation,
    /// the body's description when the body is sent again, the user agent, the W3C trace
    /// context (`traceparent`, `tracestate`; not `baggage`, which may name users or tenants), and
    /// where a reading resumes (`range`, `if-range`, `last-event-id`: a download or event stream
    /// redirected to a CDN resumes there too). Every
    /// other header the caller or a middleware set (`Authorization`, `Cookie`, API keys, team
    /// headers) is dropped, whatever its name, and so is every credential header even when listed
    /// here (``RequestContext/credentialHeaderNames``).
    public static let crossOriginSafelist: Set<String> = [
        "accept", "accept-encoding", "accept-language", "cache-control", "content-language", "content-type", "user-agent",
        "traceparent", "tracestate", "range", "if-range", "last-event-id",
    ]
}

/// The chain's follow-up link: follows redirects with ``FollowUp``'s rules by calling the rest of
/// the chain once per hop.
package struct FollowUpLink: Sendable {
    /// A redirect's own body is read up to this much (so the connection can be reused), then dropped.
    package static let drainedBytes = 64 * 1024

    /// Whether the link follows `response`: a redirect status with a `Location`. (The Location
    /// check first: reading the status parses it, and most responses have no Location.)
    static func redirects(_ response: TransportResponse) -> Bool {
        response.head.headerFields.contains(.location) && RedirectRule.redirects(response.head.status.code)
    }

    func follow(
        _ first: TransportResponse, of request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        var request = request
        var body = body
        var context = context
        var response = first
        var hops = 0
        while RedirectRule.redirects(response.head.status.code) {
            let status = response.head.status.code
            let locations = response.head.headerFields[values: .location]
            guard let location = locations.first else { break }
            await Self.drain(response.body)
            guard locations.count == 1 else {
                throw NetworkError(
                    kind: .invalidResponse, phase: .receiving, message: "the redirect has \(locations.count) Location fields",
                    status: status)
            }
            hops += 1
            guard hops <= context.maxRedirects else { throw NetworkError.tooManyRedirects(limit: context.maxRedirects, status: status) }
            let hop = try RedirectRule.follow(request, status: status, location: location, credentialNames: context.credentialHeaderNames)
            if hop.keepsBody, let body, !body.isReplayable {
                throw NetworkError(
                    kind: .redirectRefused, phase: .receiving,
                    message: "a \(status) redirect needs the request body again, and this body cannot be read twice", status: status)
            }
            guard context.remaining > .zero else {
                throw NetworkError(kind: .timedOut, phase: .receiving, message: "the deadline passed while following a redirect")
            }
            context.recorder.update { $0.redirects += 1 }
            if context.logLevel <= .debug {
                context.logger.debug(
                    "courier.redirect.followed",
                    metadata: [
                        "courier.status": .stringConvertible(status), "courier.hop": .stringConvertible(hops),
                        "courier.url": .string(Redaction.redactedURL(hop.request.urlText)),
                        "courier.cross_origin": .stringConvertible(hop.crossesOrigin),
                    ])
            }
            request = hop.request
            if !hop.keepsBody { body = nil }
            // Once the call has left its origin, network middleware below must add no credential,
            // and a 401 from there is no verdict on the call's credentials.
            if hop.crossesOrigin { context.hasCrossedOrigin = true }
            response = try await next(request, body, context)
        }
        response.hasCrossedOrigin = context.hasCrossedOrigin
        return response
    }

    /// Reads a redirect's body up to `limit` (``drainedBytes`` by default) so its connection can be
    /// reused, then drops it (which stops the transfer). A failure while reading it does not
    /// matter: it is not the answer.
    package static func drain(_ body: ResponseBody, upTo limit: Int = drainedBytes) async {
        var read = 0
        do {
            for try await chunk in body {
                read += chunk.count
                if read > limit { break }
            }
        } catch {
            return
        }
    }
}
