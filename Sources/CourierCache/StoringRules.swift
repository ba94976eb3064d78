import Courier
import HTTPTypes

/// Whether a response may be stored, and what an unsafe request invalidates (RFC 9111 §3, §3.5
/// and §4.4), for Courier's private cache.
enum StoringRules {
    /// Why a response is not stored; `nil` when it may be.
    enum Refusal: String, Sendable, Hashable {
        /// Only `GET` and `HEAD` responses are stored.
        case method
        /// Partial content, `304`, and interim or unknown statuses are not stored.
        case status
        /// The request or the response said `no-store`.
        case noStore
        /// The response gives no lifetime and no way to compute one (nor a validator to
        /// revalidate with).
        case noLifetime
        /// The request carried `Authorization` and the response did not say it may be reused.
        case credentials
        /// The response is `private` and the request carried no credentials to scope it by.
        case privateWithoutCredentials
        /// `Vary: *`, or a `Vary` nominating too many fields.
        case vary
    }

    /// Decides whether the response to `request` may be stored.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - requestControl: The request's `Cache-Control`.
    ///   - freshness: The response's freshness information.
    ///   - responseFields: The response's header fields.
    ///   - carriesCredentials: Whether the request carried any credential (`CredentialScope`): the
    ///     entry is then keyed by them.
    /// - Returns: Why not, or `nil` when it may be stored.
    static func refusal(
        request: HTTPRequest, requestControl: CacheControl, freshness: StoredFreshness, responseFields: HTTPFields,
        carriesCredentials: Bool
    ) -> Refusal? {
        guard request.method == .get || request.method == .head else { return .method }
        let status = freshness.status
        guard (200...599).contains(status), status != 206, status != 304 else { return .status }
        if requestControl.noStore || freshness.control.noStore { return .noStore }
        // RFC 9111 §3.5: a response to a request with credentials is reused only when it says so.
        if request.headerFields[.authorization] != nil {
            let control = freshness.control
            guard control.isPublic || control.mustRevalidate || control.sharedMaxAge != nil else { return .credentials }
        }
        // One cache serves every caller: a private answer is kept only under the credentials of the
        // caller it belongs to.
        if freshness.control.isPrivate, !carriesCredentials { return .privateWithoutCredentials }
        if !responseFields[values: .vary].isEmpty,
            VaryKey.names(of: responseFields[values: .vary]) == nil
        {
            return .vary
        }
        let hasValidator = responseFields[.eTag] != nil || responseFields[.lastModified] != nil
        let understood =
            freshness.hasExplicitLifetime || freshness.control.isPublic || freshness.control.isPrivate
            || StoredFreshness.heuristicallyCacheable.contains(status)
        guard understood, freshness.lifetime > 0 || hasValidator else { return .noLifetime }
        return nil
    }

    /// Whether a response to `method` with `status` invalidates what is stored for the same URL
    /// (RFC 9111 §4.4): an unsafe method answered with a non-error status.
    static func invalidates(method: HTTPRequest.Method, status: Int) -> Bool {
        let safe: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]
        return !safe.contains(method) && (200...399).contains(status)
    }
}
