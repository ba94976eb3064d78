import Courier
import Foundation
import HTTPTypes
import Synchronization

/// The cookies one client keeps, by RFC 6265: stored from each hop's `Set-Cookie`, sent with each
/// hop whose URL they match.
///
/// Opt in per client with `ClientConfiguration.keepsCookies` (the key `cookies`): the client
/// then makes a jar of its own (`NetworkClient.cookieJar`), never shared with another client.
/// The jar is a step of the chain around each hop, redirects included, so a cookie a redirect sets
/// goes only where the jar's rules send it, whatever the caller's own headers were.
///
/// The rules: domain and path matching; a `Domain` that the request's host does not match, or that
/// is a public suffix (``PublicSuffixes``: the whole Public Suffix List, `co.uk`, `github.io`,
/// `myshopify.com`, …, service infrastructure such as `payments.svc.cluster.local`, and every single
/// label), is refused; `Secure` cookies are stored only from `https` and sent only over it;
/// `HttpOnly` is kept (a server client has no scripts to hide it from); `SameSite` is ignored;
/// `Max-Age` wins over `Expires`, and both count on the client's clock. One `Set-Cookie` field is
/// one cookie (a comma never starts another; the URLSession transport, whose library joins the
/// fields, refuses a jar).
///
/// Caps: 4096 bytes per cookie, 50 per domain, 150 per site (``PublicSuffixes/site(of:)``), 3000
/// in all. Past a cap, cookies without `Secure` go before `Secure` ones, then the least recently
/// used. Past the whole jar's cap, cookies without `Secure` go first from the site that holds the
/// most; a `Secure` cookie goes only to make room for its own site's, so no flood, from one site
/// or many, pushes out another site's `Secure` cookie.
public final class CookieJar: Sendable {
    /// One stored cookie.
    public struct Cookie: Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String
        /// The domain: the host that set it (``isHostOnly``) or the `Domain` it named.
        public var domain: String
        /// The path it is sent for.
        public var path: String
        /// Whether it goes only to ``domain`` itself, not to the names under it.
        public var isHostOnly: Bool
        /// Whether it is sent only over `https`.
        public var isSecure: Bool
        /// Whether the server marked it `HttpOnly`.
        public var isHTTPOnly: Bool
        /// When it expires on the client's clock; `nil` for a session cookie (kept while the jar lives).
        public var expires: ContinuousClock.Instant?
        /// The order cookies were first stored in (ties in the `Cookie` header go to the older).
        var created: UInt64
        /// The order of last use, for eviction.
        var used: UInt64
        /// The site of ``domain``, for the caps (set when the cookie is read).
        var site: String
    }

    /// The most bytes of name and value one cookie may have.
    public static let maxCookieBytes = 4096
    /// The most cookies kept for one domain.
    public static let maxPerDomain = 50
    /// The most cookies kept for one site (a registrable domain and every name under it).
    public static let maxPerSite = 150
    /// The most cookies kept in all.
    public static let maxCookies = 3000
    /// The longest `Cookie` line a request gets.
    public static let maxHeaderBytes = 8192

    private struct State {
        var cookies: [Cookie] = []
        var counter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let clock: any TimeSource
    /// The suffixes a `Domain` may not name.
    public let publicSuffixes: PublicSuffixes

    /// An empty jar.
    /// - Parameters:
    ///   - clock: The clock expiry counts on; the system's by default.
    ///   - publicSuffixes: The suffixes a `Domain` may not name; the list and the infrastructure
    ///     rules by default.
    public init(clock: any TimeSource = SystemTimeSource(), publicSuffixes: PublicSuffixes = .standard) {
        self.clock = clock
        self.publicSuffixes = publicSuffixes
    }

    /// The cookies kept and not expired, in the order they were last stored.
    public var cookies: [Cookie] {
        let now = clock.now
        return state.withLock { $0.cookies.filter { $0.expires.map { $0 > now } ?? true } }
    }

    /// Forgets every cookie.
    public func removeAll() {
        state.withLock { $0.cookies.removeAll() }
    }

    /// The `Cookie` header value for a request, or `nil` when no cookie matches: longer paths first,
    /// then older cookies.
    /// - Parameter request: One hop's request.
    /// - Returns: The header value.
    public func header(for request: HTTPRequest) -> String? {
        guard let target = CookieTarget(request) else { return nil }
        let now = clock.now
        let chosen: [Cookie] = state.withLock { state in
            state.cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
            var matching: [Int] = []
            for (index, cookie) in state.cookies.enumerated() where target.matches(cookie) {
                matching.append(index)
            }
            guard !matching.isEmpty else { return [] }
            state.counter += 1
            for index in matching { state.cookies[index].used = state.counter }
            return matching.map { state.cookies[$0] }
        }
        guard !chosen.isEmpty else { return nil }
        // The line stays under ``maxHeaderBytes``: the cookies that sort last are left out.
        var line = ""
        for cookie in chosen.sorted(by: {
            $0.path.utf8.count != $1.path.utf8.count ? $0.path.utf8.count > $1.path.utf8.count : $0.created < $1.created
        }) {
            let pair = "\(cookie.name)=\(cookie.value)"
            guard line.utf8.count + pair.utf8.count + 2 <= Self.maxHeaderBytes else { break }
            line += line.isEmpty ? pair : "; " + pair
        }
        return line.isEmpty ? nil : line
    }

    /// Stores the cookies a response's `Set-Cookie` fields set, by the rules above; a field it
    /// cannot read, or a cookie the rules refuse, is ignored.
    /// - Parameters:
    ///   - response: One hop's response head.
    ///   - request: The request it answers.
    public func store(from response: HTTPResponse, for request: HTTPRequest) {
        let lines = response.headerFields[values: .setCookie].prefix(SetCookie.maxCookiesPerAnswer)
        guard !lines.isEmpty, let target = CookieTarget(request) else { return }
        let now = clock.now
        let wallNow = WallClock.seconds(on: clock)
        let parsed = lines.compactMap {
            SetCookie.parse($0, for: target, suffixes: publicSuffixes, now: now, wallNow: wallNow)
        }
        guard !parsed.isEmpty else { return }
        state.withLock { state in
            for var cookie in parsed {
                // From plain http, nothing may replace, delete or shadow a Secure cookie of the
                // same name whose domain and path overlap (RFC 6265bis 5.7, step 16).
                if !target.isSecure,
                    state.cookies.contains(where: { old in
                        old.isSecure && old.name == cookie.name
                            && (Self.overlaps(old.domain, cookie.domain)) && CookieTarget.pathMatches(cookie.path, old.path)
                    })
                {
                    continue
                }
                let existing = state.cookies.firstIndex {
                    $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path
                }
                state.counter += 1
                cookie.created = existing.map { state.cookies[$0].created } ?? state.counter
                cookie.used = state.counter
                if let existing { state.cookies.remove(at: existing) }
                if let expires = cookie.expires, expires <= now { continue }
                state.cookies.append(cookie)
            }
            Self.evict(&state.cookies, now: now, touching: parsed)
        }
    }

    /// Whether either domain is the other or under it.
    private static func overlaps(_ one: String, _ other: String) -> Bool {
        one == other || one.hasSuffix("." + other) || other.hasSuffix("." + one)
    }

    /// Drops expired cookies, then the ones past the caps: per domain, per site, then in all from
    /// the site that holds the most; within each, cookies without `Secure` first, then the least
    /// recently used.
    /// (Only the domains and sites of the cookies just stored can be past their caps.)
    private static func evict(_ cookies: inout [Cookie], now: ContinuousClock.Instant, touching stored: [Cookie]) {
        cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
        func evictionOrder(_ indices: [Int]) -> [Int] {
            indices.sorted { (cookies[$0].isSecure ? 1 : 0, cookies[$0].used) < (cookies[$1].isSecure ? 1 : 0, cookies[$1].used) }
        }
        var dropped = Set<Int>()
        for (key, cap) in [(\Cookie.domain, maxPerDomain), (\Cookie.site, maxPerSite)] {
            for value in Set(stored.map { $0[keyPath: key] }) {
                let indices = cookies.indices.filter { !dropped.contains($0) && cookies[$0][keyPath: key] == value }
                if indices.count > cap { dropped.formUnion(evictionOrder(indices).prefix(indices.count - cap)) }
            }
        }
        let kept = cookies.indices.filter { !dropped.contains($0) }
        if kept.count > maxCookies {
            // In all: cookies without Secure first, each from the site that holds the most (ties:
            // the one whose cookie was used longest ago); then Secure cookies only of the sites
            // this answer stored for, so no flood, from one site or many, takes another site's
            // Secure cookie.
            var excess = kept.count - maxCookies
            var held = Dictionary(grouping: kept, by: { cookies[$0].site }).mapValues(\.count)
            var plain = Dictionary(grouping: kept.filter { !cookies[$0].isSecure }, by: { cookies[$0].site })
                .mapValues { evictionOrder($0)[...] }
            while excess > 0 {
                let next = plain.filter { !$0.value.isEmpty }.max { one, other in
                    let (a, b) = (held[one.key] ?? 0, held[other.key] ?? 0)
                    guard a == b, let x = one.value.first, let y = other.value.first else { return a < b }
                    return cookies[x].used > cookies[y].used
                }
                guard let site = next?.key, let first = plain[site]?.popFirst() else { break }
                dropped.insert(first)
                held[site, default: 1] -= 1
                excess -= 1
            }
            let touched = Set(stored.map(\.site))
            for index in evictionOrder(kept.filter { !dropped.contains($0) && touched.contains(cookies[$0].site) }).prefix(excess) {
                dropped.insert(index)
            }
        }
        if !dropped.isEmpty { cookies = cookies.indices.filter { !dropped.contains($0) }.map { cookies[$0] } }
    }
}

extension CookieJar.Cookie {
    /// Equal when every public field is (the jar's order counters aside).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.name, lhs.value, lhs.domain, lhs.path) == (rhs.name, rhs.value, rhs.domain, rhs.path)
            && (lhs.isHostOnly, lhs.isSecure, lhs.isHTTPOnly) == (rhs.isHostOnly, rhs.isSecure, rhs.isHTTPOnly)
            && lhs.expires == rhs.expires
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(domain)
        hasher.combine(path)
        hasher.combine(value)
    }
}

extension CookieJar.Cookie: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The name, where it goes and its flags; never the value (a cookie is a credential).
    public var description: String {
        "\(name)=\(Redaction.placeholder); domain \(domain)\(isHostOnly ? " (host only)" : ""); path \(path)"
            + (isSecure ? "; Secure" : "") + (isHTTPOnly ? "; HttpOnly" : "")
    }

    public var debugDescription: String { description }

    /// One child, the redacted ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

/// What of a request the cookie rules read: the scheme, the canonical host, and the path without
/// its query.
struct CookieTarget {
    let isSecure: Bool
    let host: String
    let isAddress: Bool
    let path: String

    init?(_ request: HTTPRequest) {
        var host = Origin.hostAndPort(of: request.authority ?? "").host
        guard !host.isEmpty else { return nil }
        if host.hasSuffix(".") { host.removeLast() }
        self.host = host
        isAddress = PublicSuffixes.isAddress(host)
        isSecure = request.scheme?.lowercased() == "https"
        let full = request.path ?? "/"
        path = String(full.prefix { $0 != "?" && $0 != "#" })
    }

    /// RFC 6265 5.1.3: the host is the domain, or a name under it (never an IP address).
    func domainMatches(_ domain: String) -> Bool {
        host == domain || (!isAddress && host.hasSuffix("." + domain))
    }

    /// RFC 6265 5.1.4.
    func pathMatches(_ cookiePath: String) -> Bool {
        Self.pathMatches(path.isEmpty ? "/" : path, cookiePath)
    }

    /// RFC 6265 5.1.4: `requestPath` is `cookiePath`, or under it.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// The default path (RFC 6265 5.1.4): the request path up to its last `/`, or `/`.
    var defaultPath: String {
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    func matches(_ cookie: CookieJar.Cookie) -> Bool {
        (cookie.isHostOnly ? host == cookie.domain : domainMatches(cookie.domain)) && pathMatches(cookie.path)
            && (!cookie.isSecure || isSecure)
    }
}
