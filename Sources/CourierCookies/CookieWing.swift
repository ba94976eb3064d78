import Courier
import HTTPTypes

/// The cookie jar's settings in a configuration (kept in its wings' settings).
struct CookieSettings: Sendable {
    var keepsCookies = false
    var suffixes = PublicSuffixes.standard
}

extension ClientConfiguration {
    /// Whether the client keeps cookies (RFC 6265) in a ``CookieJar`` of its own
    /// (`NetworkClient.cookieJar`); `false` by default: no cookie is stored or sent but
    /// the ones a call sets itself. The key `cookies`.
    public var keepsCookies: Bool {
        get { wings[CookieSettings.self]?.keepsCookies ?? false }
        set { wings[CookieSettings.self, of: LinkedWing.self, key: "cookies", default: CookieSettings()].keepsCookies = newValue }
    }

    /// The public suffixes the jar refuses as a cookie's `Domain` (``PublicSuffixes``): the Public
    /// Suffix List and the infrastructure rules by default; add your own with
    /// ``PublicSuffixes/init(extraRules:)`` (the key `cookieSuffixes`).
    public var cookieSuffixes: PublicSuffixes {
        get { wings[CookieSettings.self]?.suffixes ?? .standard }
        set { wings[CookieSettings.self, of: LinkedWing.self, key: "cookieSuffixes", default: CookieSettings()].suffixes = newValue }
    }
}

extension NetworkClient {
    /// This client's cookies, when `ClientConfiguration.keepsCookies` is on: a jar of its
    /// own, shared with no other client; `nil` otherwise.
    public var cookieJar: CookieJar? { wingValue(LinkedWing.self) as? CookieJar }
}

extension ConfigurationKey {
    /// `cookies`: whether the client keeps cookies.
    public static let cookies = flag(
        "cookies", \.keepsCookies, default: "false",
        "Whether the client keeps cookies (RFC 6265) in a jar of its own (product `CourierCookies`).")
    /// `cookieSuffixes`: more public suffixes for the jar.
    public static let cookieSuffixes = ConfigurationKey(
        "cookieSuffixes", .strings, default: "none",
        "More public suffixes for the cookie jar (`*.tenants.acme.internal`), besides the list and the infrastructure rules (product `CourierCookies`)."
    ) { load, value, name throws(ConfigurationError) in
        do throws(ConfigurationError) {
            load.configuration.cookieSuffixes = try PublicSuffixes(extraRules: value.texts(name, load))
        } catch {
            throw error.key == name ? load.error(name, error.value, allowed: error.allowed) : error
        }
    }
}

/// The cookie jar as a wing: its keys, and for a configuration that keeps cookies, a jar of the
/// client's own and the link that uses it around each hop. Found by the kernel by this enum's
/// mangled name (`knownWings`).
package enum LinkedWing: Wing {
    package static var keys: [ConfigurationKey] { [.cookies, .cookieSuffixes] }

    package static func parts(for setup: WingSetup) throws(ConfigurationError) -> WingParts? {
        let configuration = setup.configuration
        let transport = setup.transport
        guard configuration.keepsCookies else { return nil }
        // A cookie's value may hold a comma: `a=1,b=2; Secure` read apart would lose its Secure.
        if transport.joinsRepeatedResponseFields {
            throw ClientConfiguration.unsupported(
                ConfigurationKey.cookies.name, value: "true", by: transport.name,
                "it joins a response's Set-Cookie fields into one, which cannot be read apart safely; use the curl or ahc transport"
            )
        }
        let jar = CookieJar(clock: configuration.timeSource, publicSuffixes: configuration.cookieSuffixes)
        return WingParts(hop: CookieJarLink(jar: jar), value: jar)
    }

    package static func describe(_ configuration: ClientConfiguration) -> [String] {
        configuration.keepsCookies ? ["cookies: on"] : []
    }
}

/// The cookie jar around each hop, above the cache (whose key then sees the cookies): the jar's
/// cookies for the hop's URL after any the call set itself, and what the hop's own answer sets.
struct CookieJarLink: Middleware {
    let jar: CookieJar

    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next) async throws
        -> TransportResponse
    {
        var sent = request
        if let cookie = jar.header(for: request) {
            let own = request.headerFields[values: .cookie]
            sent.headerFields[.cookie] = (own + [cookie]).joined(separator: "; ")
        }
        let response = try await next(sent, body, context)
        // Only an answer to this call's own request sets cookies: not one the cache served, nor
        // another caller's transfer this call joined.
        if response.head.headerFields[.setCookie] != nil {
            let metrics = context.recorder.metrics
            if !metrics.deduplicated, metrics.cache != .hit, metrics.cache != .stale {
                jar.store(from: response.head, for: request)
            }
        }
        return response
    }
}
