import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Proxy configuration: one decision per hop, read once")
struct ProxyConfigurationTests {
    private func request(_ scheme: String, _ authority: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/")
    }

    @Test("a proxy URL: host, port (80 when none), percent-decoded credentials")
    func proxyURLs() throws {
        let plain = try ProxyServer(url: "http://Proxy.Example:3128")
        #expect(plain.host == "proxy.example" && plain.port == 3128 && plain.username == nil && plain.url == "http://proxy.example:3128")
        let defaulted = try ProxyServer(url: "http://10.0.0.1/")
        #expect(defaulted.port == 80 && defaulted.host == "10.0.0.1")
        let credentials = try ProxyServer(url: "http://svc%40corp:p%3Ass@[::1]:8080")
        #expect(
            credentials.username == "svc@corp" && credentials.password == "p:ss" && credentials.host == "[::1]" && credentials.port == 8080)
        let userOnly = try ProxyServer(url: "http://svc@proxy:1")
        #expect(userOnly.username == "svc" && userOnly.password == "")
    }

    @Test(
        "a proxy Courier cannot use the same way everywhere is refused, naming the key, never showing the password",
        arguments: [
            "https://proxy:443", "socks5://proxy:1080", "proxy:3128", "http://", "http://proxy:0", "http://proxy:65536",
            "http://proxy:80x", "http://proxy:/", "http://proxy/path", "http://proxy?x=1", "http://pro xy:1", "http://user:secret@:1",
            "http://[::1:1", "http://%zz:secret@proxy:1",
        ])
    func refusedProxyURLs(url: String) {
        do {
            _ = try ProxyServer(url: url)
            Issue.record("\(url) was taken")
        } catch {
            #expect(error.key == "proxy")
            #expect(!"\(error)".contains("secret"), "\(error)")
        }
    }

    @Test(
        "whatever shape a refused proxy URL has, its error never shows any part of the password",
        arguments: [
            "user:pw-s3cret@proxy:3128", "http://u:pw-s3cret/x@proxy", "http://u:pw-s3cret?x@proxy", "http://u:pw-s3cret#x@proxy",
            "socks5://u:pw-s3cret@proxy:1", "http://a%3Ab:pw-s3cret@proxy:1", "http://u:pw-s3cret%0A@proxy:1",
            "http://u%00:pw-s3cret@proxy:1", "http://u:pw-s3cret@proxy:99999",
        ])
    func refusalsHideThePassword(url: String) {
        do {
            _ = try ProxyServer(url: url)
            Issue.record("\(url) was taken")
        } catch {
            for fragment in ["pw-s3cret", "s3cret", "pw-s", "cret"] {
                #expect(!"\(error)".contains(fragment) && error.value?.contains(fragment) != true, "\(error)")
            }
        }
    }

    @Test("the description and dump of a proxy never show its password")
    func redacted() throws {
        let proxy = try ProxyServer(url: "http://svc:hunter2@proxy:3128")
        var configuration = ClientConfiguration()
        configuration.proxy = ProxyConfiguration(http: proxy, https: proxy)
        var dumped = ""
        dump(proxy, to: &dumped)
        for text in ["\(proxy)", String(reflecting: proxy), dumped, "\(configuration)"] {
            #expect(!text.contains("hunter2") && text.contains("proxy:3128"), "\(text)")
        }
    }

    @Test("the environment is read the way libcurl reads it")
    func environment() throws {
        let none = try ProxyConfiguration.environment([:])
        #expect(none.isNone && none == .none)
        // HTTP_PROXY in capitals is never read (a CGI request's `Proxy` header sets it).
        #expect(try ProxyConfiguration.environment(["HTTP_PROXY": "http://evil:1"]).isNone)
        let both = try ProxyConfiguration.environment([
            "http_proxy": "plain:3128", "HTTPS_PROXY": "http://secure:3129", "NO_PROXY": "internal, .svc,10.0.0.0/8,,",
        ])
        #expect(both.httpProxy?.url == "http://plain:3128" && both.httpsProxy?.url == "http://secure:3129")
        #expect(both.noProxy.map(\.description) == ["internal", ".svc", "10.0.0.0/8"])
        // Lowercase wins over capitals; all_proxy fills a scheme without its own; empty is unset.
        let fallback = try ProxyConfiguration.environment([
            "https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1", "http_proxy": "", "ALL_PROXY": "http://all:2",
            "no_proxy": "a.test", "NO_PROXY": "b.test",
        ])
        #expect(fallback.httpsProxy?.host == "lower" && fallback.httpProxy?.host == "all")
        #expect(fallback.noProxy.map(\.description) == ["a.test"])
        // Without a proxy the exclusions mean nothing and are not read, readable or not.
        #expect(try ProxyConfiguration.environment(["no_proxy": "localhost,127.0.0.1,host:8080"]) == .none)
    }

    @Test("an environment value Courier cannot use names its variable")
    func environmentRefusals() {
        for (variable, value) in [
            ("https_proxy", "socks5h://proxy:1080"), ("no_proxy", "10.0.0.0/33"), ("https_proxy", "http://u:pw-s3cret@:1"),
        ] {
            do {
                _ = try ProxyConfiguration.environment([variable: value, "http_proxy": "http://proxy:1"])
                Issue.record("\(variable)=\(value) was taken")
            } catch {
                #expect(error.variable == variable && error.source == "environment", "\(error)")
                #expect(!"\(error)".contains("s3cret"), "\(error)")
            }
        }
    }

    @Test("no-proxy entries: *, domains and their subdomains, addresses, CIDR networks; ports are no part of a host")
    func exclusions() throws {
        let proxy = try ProxyServer(url: "http://proxy:3128")
        func routed(_ noProxy: [String], _ scheme: String, _ authority: String) throws -> Bool {
            let list = try noProxy.map { entry throws(ConfigurationError) in try ProxyExclusion(entry) }
            return ProxyConfiguration(http: proxy, https: proxy, noProxy: list).server(for: request(scheme, authority)) != nil
        }
        #expect(try routed([], "https", "api.example.com"))
        #expect(try !routed(["example.com"], "https", "api.example.com:8443"))
        #expect(try !routed([".example.com"], "http", "example.com"))
        #expect(try !routed(["EXAMPLE.com."], "http", "deep.api.example.com"))
        #expect(try !routed(["*.example.com"], "http", "api.example.com"))
        #expect(try routed(["example.com"], "http", "notexample.com"))
        #expect(try routed(["example.com"], "http", "example.com.evil.test"))
        #expect(try !routed(["*"], "http", "anything.test"))
        #expect(try !routed(["10.1.2.3"], "http", "10.1.2.3:80"))
        #expect(try routed(["10.1.2.3"], "http", "10.1.2.4"))
        #expect(try !routed(["10.0.0.0/8"], "http", "10.200.0.1"))
        #expect(try routed(["10.0.0.0/8"], "http", "11.0.0.1"))
        #expect(try !routed(["192.168.1.0/23"], "http", "192.168.0.7"))
        #expect(try routed(["192.168.1.0/24"], "http", "192.168.0.7"))
        #expect(try !routed(["::1"], "http", "[::1]:8080"))
        #expect(try !routed(["[fd00::]/8"], "https", "[fd12::5]"))
        #expect(try routed(["fd00::/8"], "https", "[fe80::1]"))
        // A network never matches a name (nothing is resolved), nor an IPv4 host an IPv6 one.
        #expect(try routed(["127.0.0.0/8"], "http", "localhost"))
        #expect(try routed(["::/0"], "http", "127.0.0.1"))
        for bad in ["10.0.0.0/40", "::1/129", "host:8080", "a b", "1.2.3.4/x", "exa/mple", "."] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ProxyExclusion(bad) }
        }
    }

    @Test("a scheme without a proxy goes directly")
    func perScheme() throws {
        let only = ProxyConfiguration(http: nil, https: try ProxyServer(url: "http://secure:1"))
        #expect(only.server(for: request("http", "a.test")) == nil)
        #expect(only.server(for: request("https", "a.test"))?.host == "secure")
    }

    @Test("the proxy and noProxy keys, from a file and from the environment")
    func keys() throws {
        let file = Data(#"{"proxy": "http://svc:pw@proxy.internal:3128", "noProxy": ["internal", "10.0.0.0/8"]}"#.utf8)
        let loaded = try ClientConfiguration().applyingJSON(file, source: "file.json")
        #expect(loaded.proxy.httpsProxy?.username == "svc" && loaded.proxy.httpProxy?.port == 3128)
        #expect(loaded.proxy.noProxy.map(\.description) == ["internal", "10.0.0.0/8"])
        #expect(loaded.transportSettingKeys.contains("proxy"))
        let fromEnvironment = try ClientConfiguration.load(environment: [
            "COURIER_PROXY": "environment", "COURIER_NO_PROXY": "extra.test", "https_proxy": "http://corp:8080", "no_proxy": "svc",
        ])
        #expect(fromEnvironment.proxy.httpsProxy?.url == "http://corp:8080" && fromEnvironment.proxy.httpProxy == nil)
        #expect(fromEnvironment.proxy.noProxy.map(\.description) == ["extra.test", "svc"])
        let off = try loaded.applyingJSON(Data(#"{"proxy": "none"}"#.utf8), source: "second.json")
        #expect(off.proxy.isNone && !off.transportSettingKeys.contains("proxy"))
        do {
            _ = try ClientConfiguration().applyingJSON(Data(#"{"proxy": "socks5://u:pw@proxy:1"}"#.utf8), source: "bad.json")
            Issue.record("a SOCKS proxy was taken")
        } catch {
            #expect(error.key == "proxy" && error.source == "bad.json" && !"\(error)".contains("pw@"), "\(error)")
        }
        do {
            _ = try ClientConfiguration.load(environment: ["COURIER_PROXY": "environment", "http_proxy": "https://p:1"])
            Issue.record("an https proxy from the environment was taken")
        } catch {
            #expect(error.key == "proxy" && error.variable == "http_proxy", "\(error)")
        }
    }

    @Test("a transport that reads no transport settings refuses a proxy, naming the key")
    func defaultRefusal() throws {
        var configuration = ClientConfiguration()
        configuration.proxy = try ProxyConfiguration(server: "http://proxy:1")
        struct Plain: Transport {
            var name: String { "plain" }
            func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
                TransportResponse(head: HTTPResponse(status: .ok))
            }
            func shutdown() async {}
        }
        #expect(throws: ConfigurationError.self) { try Plain().checkSettings(of: configuration) }
    }
}
