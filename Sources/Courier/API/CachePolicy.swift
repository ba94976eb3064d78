import HTTPTypes

/// How one call uses the client's response cache (`ResponseCache`, in the product `CourierCache`).
///
/// Set it per call (``Endpoint/cachePolicy``, ``BaseAPI/cachePolicy``) or for the client
/// (``ClientConfiguration/cachePolicy``); the call's choice wins. Without a cache configured every
/// policy loads from the network, except ``cacheOnly``, which fails with
/// ``NetworkError/Kind/notCached``: a ``cacheOnly`` call never reaches the network, whatever its
/// method.
public enum CachePolicy: Sendable, Hashable {
    /// HTTP's rules (RFC 9111): a fresh stored response is served, a stale one is revalidated
    /// when it has a validator, and what the response allows is stored. The default.
    case useProtocol
    /// Always loads from the network; the response is still stored when it may be.
    case reloadIgnoringCache
    /// Asks the server every time, with `If-None-Match` or `If-Modified-Since` when a response is
    /// stored: a `304` serves the stored body.
    case revalidateAlways
    /// Serves any stored response, however stale, and loads only when nothing is stored.
    case returnCacheElseLoad
    /// Serves only what is stored (offline): nothing is sent, and a miss fails with
    /// ``NetworkError/Kind/notCached``.
    case cacheOnly
    /// HTTP's rules, and when the network or the server fails (a transport error, or a `5xx`), a
    /// stored response at most `maxStale` past its lifetime is served instead. The metrics say
    /// ``RequestMetrics/CacheResult/stale``.
    case staleIfError(maxStale: Duration)
}

extension NetworkError {
    /// The failure of a ``CachePolicy/cacheOnly`` call that the cache could not serve, and why.
    package static func notCached(_ request: HTTPRequest, why: String) -> NetworkError {
        NetworkError(
            kind: .notCached, phase: .building,
            message: "the cache policy allows only the cache and \(why) for \(request.method.rawValue) "
                + Redaction.redactedURL(request.urlText) + "; nothing was sent")
    }
}
