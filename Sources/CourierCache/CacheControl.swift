import Courier

/// The directives of a message's `Cache-Control` fields (RFC 9111 §5.2), request and response
/// directives alike.
///
/// `Cache-Control` is not a structured field (RFC 8941 came after it, and its grammar allows what
/// structured fields do not, such as `no-cache="Set-Cookie, Set-Cookie2"` and unknown extensions
/// with any token), so it is parsed here by hand: comma-separated `name[=value]`, names
/// case-insensitive, values a token or a quoted string. Commas inside a quoted string do not
/// split. Unknown directives are ignored, as RFC 9111 §5.2.3 requires.
///
/// Conflicting or invalid freshness information (two different `max-age` values, a `max-age`
/// that is not a number) makes ``hasInvalidFreshness`` true, and the response is then treated
/// as stale (RFC 9111 §4.2.1).
struct CacheControl: Sendable, Hashable {
    /// `max-age`: seconds (response: the freshness lifetime; request: the oldest acceptable age).
    var maxAge: Int64?
    /// `s-maxage`: the lifetime in shared caches. Courier's cache is private and ignores it for
    /// freshness; it counts only where RFC 9111 lets a response to a request with credentials
    /// be stored.
    var sharedMaxAge: Int64?
    /// `no-store`.
    var noStore = false
    /// `no-cache` (with or without a field list: Courier revalidates the whole response).
    var noCache = false
    /// `private`.
    var isPrivate = false
    /// `public`.
    var isPublic = false
    /// `must-revalidate` (or `proxy-revalidate`, which means the same to a private cache that
    /// treats itself strictly).
    var mustRevalidate = false
    /// `immutable` (RFC 8246): no need to revalidate while fresh, even when the caller asks.
    var immutable = false
    /// `stale-while-revalidate` (RFC 5861): seconds a stale response may be served while it is
    /// revalidated in the background.
    var staleWhileRevalidate: Int64?
    /// `stale-if-error` (RFC 5861): seconds a stale response may be served when revalidating fails.
    var staleIfError: Int64?
    /// Request `max-stale`: `.some(nil)` accepts any staleness, `.some(n)` up to `n` seconds.
    var maxStale: Int64??
    /// Request `min-fresh`: seconds the response must stay fresh for.
    var minFresh: Int64?
    /// Request `only-if-cached`.
    var onlyIfCached = false
    /// A freshness directive was repeated with different values, or had a value that is not a
    /// number.
    var hasInvalidFreshness = false

    /// The greatest delta-seconds value Courier represents: larger values mean this (RFC 9111 §1.2.2).
    static let maxDeltaSeconds: Int64 = 2_147_483_648

    /// The most directives read from one message; the rest are ignored.
    static let maxDirectives = 64

    /// No directives.
    init() {}

    /// Parses every `Cache-Control` field value of a message, in order.
    init(fields: some Sequence<some StringProtocol>) {
        var count = 0
        for field in fields {
            for (name, value) in Self.directives(in: Substring(field)) {
                count += 1
                guard count <= Self.maxDirectives else { return }
                apply(name: name.lowercased(), value: value)
            }
        }
    }

    private mutating func apply(name: String, value: Substring?) {
        switch name {
        case "max-age": maxAge = merged(maxAge, value)
        case "s-maxage": sharedMaxAge = merged(sharedMaxAge, value)
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "immutable": immutable = true
        case "stale-while-revalidate": staleWhileRevalidate = merged(staleWhileRevalidate, value)
        case "stale-if-error": staleIfError = merged(staleIfError, value)
        case "min-fresh": minFresh = merged(minFresh, value)
        case "only-if-cached": onlyIfCached = true
        case "max-stale":
            if let value {
                guard let seconds = Self.deltaSeconds(value) else { return }
                maxStale = .some(seconds)
            } else {
                maxStale = .some(nil)
            }
        default: break
        }
    }

    /// A delta-seconds directive's value after one more occurrence; an invalid or conflicting
    /// value marks the freshness invalid (and the smaller of two values is kept).
    private mutating func merged(_ existing: Int64?, _ value: Substring?) -> Int64? {
        guard let value, let seconds = Self.deltaSeconds(value) else {
            hasInvalidFreshness = true
            return existing
        }
        if let existing, existing != seconds { hasInvalidFreshness = true }
        return min(existing ?? seconds, seconds)
    }

    /// `delta-seconds = 1*DIGIT`, saturating at ``maxDeltaSeconds``; a quoted value is accepted
    /// (RFC 9111 §5.2: senders should not, recipients should).
    static func deltaSeconds(_ text: Substring) -> Int64? {
        var digits = text
        if digits.count >= 2, digits.first == "\"", digits.last == "\"" { digits = digits.dropFirst().dropLast() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        var value: Int64 = 0
        for digit in digits.utf8 {
            value = value * 10 + Int64(digit - 48)
            if value >= maxDeltaSeconds { return maxDeltaSeconds }
        }
        return value
    }

    /// The `name[=value]` pairs of one field value; a quoted value keeps its quotes only when
    /// it is a number's (for ``deltaSeconds(_:)``), and commas inside quotes do not split.
    static func directives(in field: Substring) -> [(Substring, Substring?)] {
        var result: [(Substring, Substring?)] = []
        var start = field.startIndex
        var inQuotes = false
        var escaped = false
        var index = field.startIndex
        func take(_ end: Substring.Index) {
            let piece = field[start..<end].trimmingHTTPWhitespace()
            guard !piece.isEmpty else { return }
            if let equals = piece.firstIndex(of: "=") {
                let name = piece[..<equals].trimmingHTTPWhitespace()
                let value = piece[piece.index(after: equals)...].trimmingHTTPWhitespace()
                if !name.isEmpty { result.append((name, value)) }
            } else {
                result.append((piece, nil))
            }
        }
        while index < field.endIndex {
            let character = field[index]
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                take(index)
                start = field.index(after: index)
            }
            index = field.index(after: index)
        }
        take(field.endIndex)
        return result
    }
}
