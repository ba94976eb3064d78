import Courier
import HTTPTypes

/// RFC 9111 §4.2 for one stored response: how long it is fresh, and how old it is now.
///
/// Times are whole seconds since the epoch on the cache's clock. The response's own `Date`,
/// `Expires`, `Age` and `Last-Modified` are read once, when the response is stored (and again
/// after a `304` updates the stored head).
struct StoredFreshness: Sendable, Hashable {
    /// The most a heuristic lifetime may be: 10% of the time since `Last-Modified`, at most a day.
    static let maxHeuristicLifetime: Int64 = 86_400

    /// The statuses whose responses may be given a heuristic lifetime (RFC 9110 §15.1), less
    /// `206`: Courier does not store partial content.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// How the response's `Expires` reads.
    enum Expiry: Sendable, Hashable {
        /// No `Expires` field.
        case absent
        /// Invalid or repeated with different values: already expired (RFC 9111 §5.3).
        case past
        /// A valid date.
        case at(HTTPDate)
    }

    /// The status code.
    var status: Int
    /// The response's `Cache-Control`.
    var control: CacheControl
    /// The response's `Date`, or the time it arrived when it had none.
    var date: HTTPDate
    /// The response's `Expires`.
    var expires: Expiry
    /// The response's `Last-Modified`, when valid.
    var lastModified: HTTPDate?
    /// The response's `Age`, when valid (the first one).
    var age: Int64
    /// When the request was sent.
    var requestTime: Int64
    /// When the response arrived.
    var responseTime: Int64

    /// Reads the fields of a response head.
    /// - Parameters:
    ///   - status: The status code.
    ///   - fields: The response's header fields.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    init(status: Int, fields: HTTPFields, requestTime: Int64, responseTime: Int64) {
        self.status = status
        self.requestTime = requestTime
        self.responseTime = responseTime
        control = CacheControl(fields: fields[values: .cacheControl])
        date = fields[.date].flatMap { HTTPDate($0) } ?? HTTPDate(seconds: responseTime)
        let expiresValues = fields[values: .expires]
        if expiresValues.isEmpty {
            expires = .absent
        } else if let first = HTTPDate(expiresValues[0]), expiresValues.allSatisfy({ HTTPDate($0) == first }) {
            expires = .at(first)
        } else {
            expires = .past
        }
        lastModified = fields[.lastModified].flatMap { HTTPDate($0) }
        age = fields[values: .age].lazy.compactMap { CacheControl.deltaSeconds(Substring($0.trimmingHTTPWhitespace())) }.first ?? 0
    }

    /// Whether the response says how long it is fresh (`max-age` or `Expires`).
    var hasExplicitLifetime: Bool {
        control.maxAge != nil || expires != .absent
    }

    /// Whether the lifetime is Courier's guess from `Last-Modified` rather than the server's word.
    var isHeuristic: Bool {
        !hasExplicitLifetime && !control.hasInvalidFreshness && lastModified != nil
            && (Self.heuristicallyCacheable.contains(status) || control.isPublic)
    }

    /// The freshness lifetime in seconds (RFC 9111 §4.2.1): `max-age`, else `Expires` minus
    /// `Date`, else the heuristic, else 0. Invalid freshness information gives 0.
    var lifetime: Int64 {
        if control.hasInvalidFreshness { return 0 }
        if let maxAge = control.maxAge { return maxAge }
        switch expires {
        case .past: return 0
        case .at(let expiry): return max(0, expiry.seconds - date.seconds)
        case .absent: break
        }
        guard isHeuristic, let lastModified else { return 0 }
        return min(Self.maxHeuristicLifetime, max(0, (date.seconds - lastModified.seconds) / 10))
    }

    /// The current age in seconds (RFC 9111 §4.2.3).
    /// - Parameter now: The cache's clock now.
    func currentAge(now: Int64) -> Int64 {
        let apparentAge = max(0, responseTime - date.seconds)
        let responseDelay = max(0, responseTime - requestTime)
        let correctedAgeValue = age + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now - responseTime)
        return min(CacheControl.maxDeltaSeconds, correctedInitialAge + residentTime)
    }

    /// Seconds past its lifetime (negative while fresh).
    func staleness(now: Int64) -> Int64 { currentAge(now: now) - lifetime }

    /// Whether it may be served without asking the server (RFC 9111 §4.2), for a request with
    /// these directives.
    func isFresh(now: Int64, request: CacheControl = CacheControl()) -> Bool {
        if control.noCache || request.noCache { return false }
        let age = currentAge(now: now)
        var limit = lifetime
        if let maxAge = request.maxAge { limit = min(limit, maxAge) }
        if let minFresh = request.minFresh, lifetime - age < minFresh { return false }
        if age < limit { return true }
        // A request's max-stale accepts a stale response unless the response must be revalidated.
        guard !control.mustRevalidate, let maxStale = request.maxStale else { return false }
        guard let bound = maxStale else { return true }
        return age - limit <= bound
    }
}
