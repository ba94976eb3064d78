import Foundation
import HTTPTypes
import Testing

@testable import Courier
@testable import CourierCookies

@Suite("Cookie jar: RFC 6265 storage and retrieval")
struct CookieJarTests {
    private func request(_ url: String) -> HTTPRequest {
        let components = URLComponents(string: url)
        let authority = (components?.host ?? "") + (components?.port.map { ":\($0)" } ?? "")
        let host = authority.contains(":") && components?.host?.contains(":") == true ? "[\(authority)]" : authority
        return HTTPRequest(
            method: .get, scheme: components?.scheme, authority: host,
            path: (components?.path ?? "/") + (components?.query.map { "?\($0)" } ?? ""))
    }

    private func set(_ jar: CookieJar, _ url: String, _ fields: String...) {
        var head = HTTPResponse(status: .ok)
        for field in fields { head.headerFields.append(HTTPField(name: .setCookie, value: field)) }
        jar.store(from: head, for: request(url))
    }

    @Test("host-only cookies go to their host alone; Domain cookies to the domain and the names under it")
    func domains() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://api.example.com/", "host=1", "wide=2; Domain=.Example.COM")
        #expect(jar.header(for: request("https://api.example.com/x")) == "host=1; wide=2")
        #expect(jar.header(for: request("https://example.com/")) == "wide=2")
        #expect(jar.header(for: request("https://deep.api.example.com/")) == "wide=2")
        #expect(jar.header(for: request("https://notexample.com/")) == nil)
        #expect(jar.header(for: request("https://example.com.evil.test/")) == nil)
    }

    @Test("a Domain the host does not match, a public suffix, or a name for an IP address is refused")
    func refusedDomains() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://api.example.com/", "a=1; Domain=other.com", "b=2; Domain=com", "c=3; Domain=api.example.com.evil")
        set(jar, "https://shop.github.io/", "d=4; Domain=github.io")
        set(jar, "https://www.site.co.uk/", "e=5; Domain=co.uk", "f=6; Domain=site.co.uk")
        set(jar, "http://10.0.0.1/", "g=7; Domain=0.0.1", "h=8")
        set(jar, "http://intranet/", "i=9; Domain=intranet")
        #expect(Set(jar.cookies.map(\.name)) == ["f", "h", "i"])
        #expect(jar.header(for: request("http://10.0.0.1/")) == "h=8")
        // A single label named as its own host is host-only.
        #expect(jar.cookies.first { $0.name == "i" }?.isHostOnly == true)
    }

    @Test("paths: the default is the request's directory; /a matches /a, /a/ and /a/b, never /ab")
    func paths() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://x.test/a/b/c?q=1", "auto=1", "root=2; Path=/", "a=3; Path=/a", "bad=4; Path=relative")
        #expect(jar.cookies.first { $0.name == "auto" }?.path == "/a/b")
        #expect(jar.cookies.first { $0.name == "bad" }?.path == "/a/b")
        #expect(jar.header(for: request("https://x.test/a/b/d")) == "auto=1; bad=4; a=3; root=2")
        #expect(jar.header(for: request("https://x.test/a")) == "a=3; root=2")
        #expect(jar.header(for: request("https://x.test/ab")) == "root=2")
    }

    @Test("Secure cookies are kept only from https and sent only over it")
    func secure() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "http://x.test/", "plain=1; Secure")
        #expect(jar.cookies.isEmpty)
        set(jar, "https://x.test/", "safe=1; Secure; HttpOnly; SameSite=Strict")
        #expect(jar.header(for: request("http://x.test/")) == nil)
        #expect(jar.header(for: request("https://x.test/")) == "safe=1")
        #expect(jar.cookies.first?.isHTTPOnly == true)
    }

    @Test("expiry on the jar's clock: Max-Age wins over Expires; 0 or a past date deletes")
    func expiry() {
        let clock = ManualTimeSource()
        let jar = CookieJar(clock: clock)
        set(
            jar, "https://x.test/", "short=1; Max-Age=10; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
            "long=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT")
        clock.advance(by: .seconds(11))
        #expect(jar.header(for: request("https://x.test/")) == "long=2")
        set(jar, "https://x.test/", "long=2; Max-Age=0")
        #expect(jar.cookies.isEmpty)
        set(jar, "https://x.test/", "old=1", "gone=1")
        set(jar, "https://x.test/", "gone=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(jar.cookies.map(\.name) == ["old"])
        // The cookie form with dashes and a two-digit year deletes too.
        set(jar, "https://x.test/", "old=1; Expires=Thu, 01-Jan-70 00:00:00 GMT")
        #expect(jar.cookies.isEmpty)
        #expect(SetCookie.cookieDate("Fri, 31-Dec-49 23:59:59 GMT")?.seconds == 2_524_607_999)
    }

    @Test("replacing a cookie keeps its place; values (quotes kept), sizes and control characters are checked")
    func replaceAndLimits() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://x.test/", "a=1", "b=2")
        set(jar, "https://x.test/", "a=3")
        #expect(jar.header(for: request("https://x.test/")) == "a=3; b=2")
        set(jar, "https://x.test/", "big=" + String(repeating: "x", count: 4096), "=noname", "noequals", "ctl=a\tb", "q=\"quoted\"")
        #expect(jar.header(for: request("https://x.test/")) == "a=3; b=2; q=\"quoted\"")
        for index in 0..<60 { set(jar, "https://many.test/", "c\(index)=\(index)") }
        #expect(jar.cookies.filter { $0.domain == "many.test" }.count == CookieJar.maxPerDomain)
        #expect(jar.cookies.contains { $0.name == "c59" } && !jar.cookies.contains { $0.name == "c0" })
    }

    @Test("one Set-Cookie field is one cookie: a comma neither ends it nor starts another")
    func commasStayInTheCookie() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://x.test/", "auth=user=42,sig=X; Secure; HttpOnly", "pref=x, sid=attacker", "a=1; Path=/, b=2")
        #expect(Set(jar.cookies.map(\.name)) == ["auth", "pref", "a"])
        #expect(jar.cookies.first { $0.name == "auth" }.map { ($0.value, $0.isSecure) } ?? ("", false) == ("user=42,sig=X", true))
        #expect(jar.cookies.first { $0.name == "pref" }?.value == "x, sid=attacker")
        // Over http the whole Secure cookie is refused, never a part of it kept without Secure.
        let plain = CookieJar(clock: ManualTimeSource())
        set(plain, "http://x.test/", "auth=user=42,sig=X; Secure; HttpOnly")
        #expect(plain.cookies.isEmpty)
    }

    @Test(
        "a Domain that the Public Suffix List or the infrastructure rules name is refused; one label more is a site",
        arguments: [
            ("https://evil.payments.svc.cluster.local/", "payments.svc.cluster.local"),
            ("https://evil.payments.svc/", "payments.svc"),
            ("https://shop.co.il/", "co.il"),
            ("https://evil.myshopify.com/", "myshopify.com"),
            ("https://web.service.dc1.consul/", "service.dc1.consul"),
            ("https://web.service.consul/", "service.consul"),
            ("https://ip-10-0-0-1.us-west-2.compute.internal/", "us-west-2.compute.internal"),
            ("https://a.b.blogspot.co.uk/", "blogspot.co.uk"),
            ("https://bucket.s3.amazonaws.com/", "s3.amazonaws.com"),
            ("https://evil.x.kawasaki.jp/", "x.kawasaki.jp"),
            ("https://app.herokuapp.com/", "herokuapp.com"),
            ("https://a.b.c.d.e/", "e"),
        ])
    func publicSuffixesRefused(url: String, domain: String) {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, url, "s=1; Domain=\(domain)")
        #expect(jar.cookies.isEmpty, "\(domain) was taken from \(url)")
    }

    @Test("a Domain one label under a suffix is taken, the rules the configuration adds are read, a bad rule is refused")
    func registrableDomains() throws {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://api.shop.example.co.il/", "a=1; Domain=example.co.il")
        set(jar, "https://web.payments.svc.cluster.local/", "b=2; Domain=web.payments.svc.cluster.local")
        set(jar, "https://a.store.myshopify.com/", "c=3; Domain=store.myshopify.com")
        #expect(Set(jar.cookies.map(\.domain)) == ["example.co.il", "web.payments.svc.cluster.local", "store.myshopify.com"])
        #expect(PublicSuffixes.standard.site(of: "a.b.example.co.uk") == "example.co.uk")
        #expect(PublicSuffixes.standard.site(of: "x.payments.svc.cluster.local") == "x.payments.svc.cluster.local")
        #expect(PublicSuffixes.standard.site(of: "10.0.0.1") == "10.0.0.1")

        let suffixes = try PublicSuffixes(extraRules: ["*.tenants.acme.test"])
        let tenants = CookieJar(clock: ManualTimeSource(), publicSuffixes: suffixes)
        set(tenants, "https://evil.blue.tenants.acme.test/", "s=1; Domain=blue.tenants.acme.test")
        set(tenants, "https://evil.blue.tenants.acme.test/", "t=1; Domain=evil.blue.tenants.acme.test")
        #expect(tenants.cookies.map(\.name) == ["t"])
        for bad in ["a..b", "", "a b.test", "-ok.\u{1}"] {
            #expect(throws: ConfigurationError.self) { try PublicSuffixes(extraRules: [bad]) }
        }
        let configuration = ClientConfiguration(baseURL: "https://x.test")
        let loaded = try configuration.applyingJSON(Data(#"{"cookieSuffixes": ["*.tenants.acme.test"]}"#.utf8), source: "test")
        #expect(loaded.cookieSuffixes == suffixes)
        let error = #expect(throws: ConfigurationError.self) {
            try configuration.applyingJSON(Data(#"{"cookieSuffixes": ["a b"]}"#.utf8), source: "test")
        }
        #expect(error?.key == "cookieSuffixes" && error?.source == "test")
    }

    @Test("a flood of cookies from one site or many never pushes out another site's cookies while it holds more")
    func floodsStayWithTheirSite() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://bank.test/", "session=keep; Secure; Path=/", "pref=1")
        // One site through many names: capped per site.
        for host in 0..<10 {
            for batch in 0..<2 {
                let fields = (0..<25).map { "h\(host)_\(batch)_\($0)=v" }
                var head = HTTPResponse(status: .ok)
                for field in fields { head.headerFields.append(HTTPField(name: .setCookie, value: field)) }
                jar.store(from: head, for: request("https://n\(host).evil.test/"))
            }
        }
        #expect(jar.cookies.filter { $0.site == "evil.test" }.count == CookieJar.maxPerSite)
        // Many sites, each full: the whole jar's cap takes from the largest sites.
        for site in 0..<70 {
            var head = HTTPResponse(status: .ok)
            for index in 0..<50 { head.headerFields.append(HTTPField(name: .setCookie, value: "f\(index)=v")) }
            jar.store(from: head, for: request("https://flood\(site).test/"))
        }
        #expect(jar.cookies.count == CookieJar.maxCookies)
        #expect(Set(jar.cookies.filter { $0.domain == "bank.test" }.map(\.name)) == ["session", "pref"])
        // Within a site past its cap, cookies without Secure go first.
        let own = CookieJar(clock: ManualTimeSource())
        set(own, "https://own.test/", "secret=1; Secure")
        for index in 0..<60 { set(own, "https://own.test/", "p\(index)=v") }
        #expect(own.cookies.count == CookieJar.maxPerDomain && own.cookies.contains { $0.name == "secret" })
    }

    @Test("one Cookie field per request, whatever HTTPFields made of it")
    func oneCookieLine() {
        var sent = HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/")
        sent.headerFields[.cookie] = "a=1; b=2"
        sent.headerFields.append(HTTPField(name: .accept, value: "*/*"))
        sent.headerFields.append(HTTPField(name: .cookie, value: "c=3"))
        LinkChain.joinCookies(&sent)
        #expect(sent.headerFields.filter { $0.name == .cookie }.map(\.value) == ["a=1; b=2; c=3"])
        #expect(sent.headerFields[.accept] == "*/*")
    }

    @Test("plain http cannot replace, delete or shadow a Secure cookie; __Secure- and __Host- keep their promises")
    func secureCookiesHold() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://x.test/", "sid=good; Secure; Path=/")
        set(jar, "http://x.test/", "sid=evil; Path=/", "sid=gone; Max-Age=0", "sid=shadow; Path=/deeper")
        #expect(jar.cookies.map(\.value) == ["good"])
        set(
            jar, "https://x.test/", "__Secure-a=1", "__Secure-b=1; Secure", "__Host-c=1; Secure", "__Host-d=1; Secure; Path=/",
            "__Host-e=1; Secure; Path=/; Domain=x.test")
        #expect(Set(jar.cookies.map(\.name)) == ["sid", "__Secure-b", "__Host-d"])
    }

    @Test("Expires in the forms servers send, on the jar's clock; one answer sets at most 50 cookies; the Cookie line is capped")
    func datesAndCaps() {
        let clock = ManualTimeSource()
        let jar = CookieJar(clock: clock)
        let inAnHour = Date().addingTimeInterval(3600)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd-MMM-yyyy HH:mm:ss 'GMT'"
        set(jar, "https://x.test/", "dash=1; Expires=\(formatter.string(from: inAnHour))")
        #expect(jar.cookies.count == 1)
        clock.advance(by: .seconds(3601))
        #expect(jar.cookies.isEmpty, "the jar's clock passed the date")
        var head = HTTPResponse(status: .ok)
        for index in 0..<80 { head.headerFields.append(HTTPField(name: .setCookie, value: "n\(index)=v")) }
        jar.store(from: head, for: request("https://y.test/"))
        #expect(jar.cookies.count == 50)
        for index in 0..<50 { set(jar, "https://z.test/", "big\(index)=" + String(repeating: "v", count: 1000)) }
        #expect((jar.header(for: request("https://z.test/"))?.utf8.count ?? 0) <= CookieJar.maxHeaderBytes)
    }

    @Test("a cookie's description and dump never show its value")
    func redacted() {
        let jar = CookieJar(clock: ManualTimeSource())
        set(jar, "https://x.test/", "session=s3cr3t-value; Secure")
        var dumped = ""
        dump(jar.cookies, to: &dumped)
        for text in ["\(jar.cookies)", dumped] { #expect(!text.contains("s3cr3t") && text.contains("session"), "\(text)") }
    }
}
