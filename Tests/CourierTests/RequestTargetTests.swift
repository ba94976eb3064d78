import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The one target rule (`RequestTarget`) and where it is applied: base URLs, callers' paths,
/// redirects and the check before each attempt.
@Suite("Request targets")
struct RequestTargetTests {
    @Test(
        "a host is a plain name or an IP literal",
        arguments: [
            ("api.example.com", "api.example.com"), ("API.Example.COM", "api.example.com"), ("127.0.0.1", "127.0.0.1"),
            ("[::1]", "[::1]"), ("[FE80::1]", "[fe80::1]"), ("my_host-1.internal", "my_host-1.internal"), ("example.com.", "example.com."),
            ("xn--caf-dma.test", "xn--caf-dma.test"), ("4", "0.0.0.4"), ("127.1", "127.0.0.1"), ("0x7f.1", "127.0.0.1"),
            ("0177.0.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0x7F000001", "127.0.0.1"), ("[0:0::1]", "[::1]"),
            ("[::FFFF:127.0.0.1]", "[::ffff:127.0.0.1]"), ("foo.123abc", "foo.123abc"),
        ])
    func hosts(row: (text: String, canonical: String)) throws {
        #expect(try RequestTarget.canonicalHost(row.text).get() == row.canonical)
    }

    @Test(
        "everything else is refused",
        arguments: [
            "127.0.0.2/@127.0.0.1", "a\\@b", "a@b", "a#@b", "a?@b", "a:80", "a%2Fb", "a b", "a\u{0}b", "\u{E9}xample.test", "",
            "[::1%eth0]", "[::1", "[zz::1]", "[]", "a..b", ".a", String(repeating: "a", count: 64) + ".test", "1.2.3.256",
            "1.2.3.4.5", "0x100000000", "08.1.1.1", "[1:2:3:4:5:6:7:8:9]", "a..", "1.2.3.4..", "0x", "a.0x", "127.0.0.1.",
            String(repeating: "a.", count: 130),
        ])
    func notHosts(text: String) {
        #expect(throws: RequestTarget.HostProblem.self) { try RequestTarget.canonicalHost(text).get() }
    }

    @Test(
        "paths a transport may send, and those it may not",
        arguments: [
            ("/", nil), ("/a/b?c=d&e=/f?g", nil), ("/a/%2E%2Ex/b", nil), ("/a/.well-known/x", nil), ("/a/.../b", nil),
            ("/a/%2e%2e%2e/b", nil), ("/a?x=/../", nil), ("/a?x=/%2e%2e/", nil), ("/a/../b", "segment"), ("/a/./b", "segment"),
            ("/a/..", "segment"), ("/..?q", "segment"), ("/a/%2E%2E/b", "segment"), ("/a/%2e./b", "segment"), ("/a/.%2E", "segment"),
            ("/%2e?q", "segment"),
            ("a", "start"), ("/a#b", "'#'"), ("/a b", "space"), ("/a%2", "escape"), ("/a%zz", "escape"), ("/\u{E9}", "non-ASCII"),
            ("/a\\b", "'\\'"),
        ] as [(String, String?)])
    func paths(row: (path: String, problem: String?)) {
        let problem = RequestTarget.pathProblem(row.path)
        if let expected = row.problem {
            #expect(problem?.contains(expected) == true, "\(row.path): \(problem ?? "accepted")")
        } else {
            #expect(problem == nil, "\(row.path): \(problem ?? "")")
        }
    }

    @Test(
        "dot segments of a server's path are resolved",
        arguments: [
            ("/x/../y", "/y"), ("/a/b/..", "/a/"), ("/a/./b", "/a/b"), ("/../../a", "/a"), ("", "/"), ("/", "/"), ("/a/.", "/a/"),
            ("/a/%2e%2e/b", "/b"), ("/a/%2E./b", "/b"), ("/a/%2e/b", "/a/b"),
        ])
    func dotSegments(row: (path: String, resolved: String)) {
        #expect(RequestTarget.removingDotSegments(row.path) == row.resolved)
    }

    @Test(
        "a caller's . and .. segments, plain or encoded, are refused, never resolved",
        arguments: [
            ("https://api.test/v1", "files/../secret"), ("https://api.test/v1", "./x"), ("https://api.test/v1", "x/%2e%2e"),
            ("https://api.test/v1", "x/.%2E/y"), ("https://api.test/a/../b", "c"), ("https://api.test/a/%2E", "c"),
        ])
    func callersDotSegments(row: (base: String, path: String)) {
        let error = #expect(throws: NetworkError.self) { try URLBuilder.build(baseURL: row.base, path: row.path, query: []) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("segment") == true)
    }

    @Test("dots that are not a whole segment are fine")
    func dotsInSegments() throws {
        let built = try URLBuilder.build(baseURL: "https://api.test/v1", path: ".well-known/a..b/...", query: [QueryItem("p", "../x")])
        #expect(built.pathAndQuery == "/v1/.well-known/a..b/...?p=..%2Fx")
    }

    @Test(
        "a base URL's host must be a host, in ASCII",
        arguments: [
            "https://\u{E9}xample.test", "http://a%2Fb.test", "http://a\\b.test/", "http://[::1%25lo]/", "http://a.test:+80/",
        ])
    func baseHosts(base: String) {
        #expect(throws: NetworkError.self) { try URLBuilder.build(baseURL: base, path: "x", query: []) }
    }

    @Test(
        "what the host rule writes, the per-attempt check accepts, and only that",
        arguments: [
            "api.test", "API.Test", "4", "0x7f.1", "[0:0::1]", "[::FFFF:1.2.3.4]", "example.com.", "my_host-1", "10.0.0.1", "4m",
            "localhost",
        ])
    func rulesAgree(host: String) throws {
        let canonical = try RequestTarget.canonicalHost(host).get()
        #expect(RequestTarget.isCanonicalAuthority(canonical))
        #expect(RequestTarget.isCanonicalAuthority(canonical + ":8080"))
        #expect(try RequestTarget.canonicalHost(canonical).get() == canonical)
        if RequestTarget.isCanonicalAuthority(host) { #expect(canonical == host) }
    }

    @Test("the check before each attempt refuses what a middleware wrote")
    func attemptCheck() {
        func problem(_ authority: String, _ path: String, scheme: String = "https") -> NetworkError? {
            RequestTarget.problem(in: HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path))
        }
        #expect(problem("api.test", "/x") == nil)
        #expect(problem("api.test:8443", "/x") == nil)
        #expect(problem("[::1]:80", "/x") == nil)
        #expect(problem("4m", "/x") == nil, "a name whose last label starts with a digit is still a name")
        #expect(problem("10.0.0.1:8080", "/x") == nil)
        for authority in [
            "API.test", "user@api.test", "api.test:0", "api.test:080", "api.test:99999", "api.test:", "a/b", "evil.test#@api.test",
            "[::1", "[FE80::1]", "[::1]:", "a..b", ".a", "", "4", "127.1", "0x7f.0.0.1", "127.0.0.01", "[0:0::1]", "a..", "a..:80",
        ] {
            #expect(problem(authority, "/x")?.kind == .invalidRequest, "\(authority)")
        }
        #expect(problem("user:pass@api.test", "/x")?.message.contains("pass") == false, "user info shown in the error")
        #expect(problem("api.test", "/a/../b")?.kind == .invalidRequest)
        #expect(problem("api.test", "/x", scheme: "ftp")?.kind == .invalidRequest)
    }

    @Test("a redirect's host is decoded once and checked; user info is dropped")
    func redirectHosts() throws {
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8080", path: "/a")
        for location in ConformanceHostileLocations.all(port: 8080) {
            #expect(throws: NetworkError.self, "\(location)") {
                try RedirectRule.follow(request, status: 302, location: location)
            }
        }
        let withUser = try RedirectRule.follow(request, status: 302, location: "http://u:p@127.0.0.1:8080/x/../y")
        #expect(withUser.request.authority == "127.0.0.1:8080")
        #expect(withUser.request.path == "/y")
        #expect(!withUser.crossesOrigin)
        let decoded = try RedirectRule.follow(request, status: 302, location: "http://ex%61mple.test/p%7Cq")
        #expect(decoded.request.authority == "example.test")
        #expect(decoded.request.path == "/p%7Cq")
        #expect(decoded.crossesOrigin)
    }
}

/// The hostile `Location`s of the conformance case, for the unit test (the conformance module is
/// not imported here).
enum ConformanceHostileLocations {
    static func all(port: Int) -> [String] {
        ["%2F%40", "%5C%40", "%40", "%23%40", "%3F%40", "%2F", "%3A", "%25", "%20"].map { "http://127.0.0.2\($0)127.0.0.1:\(port)/echo" }
            + ["http://127.0.0.1%3A\(port)/echo", "http://\u{E9}xample.test/", "http://%C3%A9xample.test/", "http://[::1%25lo]/"]
    }
}
