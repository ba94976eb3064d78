import Testing

@testable import Courier

@Suite("URL building")
struct URLBuilderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let base: String
        let path: String
        let query: [QueryItem]
        let expected: String
        var testDescription: String { "\(base) + \(path) → \(expected)" }
    }

    static let cases: [Case] = [
        // Joining base and path, with and without slashes.
        Case(base: "https://api.test", path: "users", query: [], expected: "https://api.test/users"),
        Case(base: "https://api.test/", path: "users", query: [], expected: "https://api.test/users"),
        Case(base: "https://api.test", path: "/users", query: [], expected: "https://api.test/users"),
        Case(base: "https://api.test/", path: "/users", query: [], expected: "https://api.test/users"),
        Case(base: "https://api.test/v1", path: "users", query: [], expected: "https://api.test/v1/users"),
        Case(base: "https://api.test/v1/", path: "/users/", query: [], expected: "https://api.test/v1/users/"),
        Case(base: "https://api.test", path: "", query: [], expected: "https://api.test/"),
        Case(base: "https://api.test/v1/", path: "", query: [], expected: "https://api.test/v1/"),
        Case(base: "HTTP://API.Test:8080", path: "x", query: [], expected: "http://api.test:8080/x"),
        Case(base: "http://[::1]:8080", path: "x", query: [], expected: "http://[::1]:8080/x"),
        // Path segments: space, quotes, plus, ampersand, equals, slash inside a segment, Unicode.
        Case(base: "https://h", path: "files/my report.pdf", query: [], expected: "https://h/files/my%20report.pdf"),
        Case(base: "https://h", path: "q/\"quoted\"/'single'", query: [], expected: "https://h/q/%22quoted%22/%27single%27"),
        Case(base: "https://h", path: "a+b&c=d", query: [], expected: "https://h/a+b&c=d"),
        Case(base: "https://h", path: "docs/" + URLEncoding.pathSegment("a/b"), query: [], expected: "https://h/docs/a%2Fb"),
        Case(base: "https://h", path: "café/日本", query: [], expected: "https://h/caf%C3%A9/%E6%97%A5%E6%9C%AC"),
        Case(base: "https://h", path: "emoji/🚀", query: [], expected: "https://h/emoji/%F0%9F%9A%80"),
        // Text that needs no encoding (the fast path) comes out unchanged, empty segments included.
        Case(base: "https://h", path: "a-b_c.d~e/F9/!$&()*+,;=:@", query: [], expected: "https://h/a-b_c.d~e/F9/!$&()*+,;=:@"),
        Case(base: "https://h", path: "a//b/", query: [QueryItem("k-1", "v.2~_")], expected: "https://h/a//b/?k-1=v.2~_"),
        // Input that is already encoded is not encoded twice; a stray % is.
        Case(base: "https://h", path: "files/my%20report.pdf", query: [], expected: "https://h/files/my%20report.pdf"),
        Case(base: "https://h", path: "100%/done", query: [], expected: "https://h/100%25/done"),
        Case(base: "https://h", path: "bad%zzescape", query: [], expected: "https://h/bad%25zzescape"),
        Case(base: "https://h", path: "raw/" + URLEncoding.pathSegment("50%/x y"), query: [], expected: "https://h/raw/50%25%2Fx%20y"),
        Case(base: "https://h", path: "q?x#y", query: [], expected: "https://h/q%3Fx%23y"),
        // Query: space, plus, ampersand, equals, quotes, Unicode, bare names, order kept.
        Case(base: "https://h", path: "s", query: [QueryItem("q", "a b")], expected: "https://h/s?q=a%20b"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "1+1=2")], expected: "https://h/s?q=1%2B1%3D2"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "a&b")], expected: "https://h/s?q=a%26b"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "\"x\"")], expected: "https://h/s?q=%22x%22"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "é")], expected: "https://h/s?q=%C3%A9"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "a/b")], expected: "https://h/s?q=a%2Fb"),
        Case(base: "https://h", path: "s", query: [QueryItem("q", "50%")], expected: "https://h/s?q=50%25"),
        Case(
            base: "https://h", path: "s", query: [QueryItem("flag", nil), QueryItem("b", "2"), QueryItem("a", "1")],
            expected: "https://h/s?flag&b=2&a=1"),
        Case(base: "https://h", path: "s", query: [QueryItem("k e", "v")], expected: "https://h/s?k%20e=v"),
        Case(base: "https://h", path: "s", query: [QueryItem(name: "q", percentEncodedValue: "a%20b")], expected: "https://h/s?q=a%20b"),
        // A base URL with its own query keeps it; items are appended.
        Case(base: "https://h/v1?key=abc", path: "s", query: [QueryItem("x", "1")], expected: "https://h/v1/s?key=abc&x=1"),
    ]

    @Test("builds the expected URL", arguments: cases)
    func builds(_ testCase: Case) throws {
        let url = try URLBuilder.build(baseURL: testCase.base, path: testCase.path, query: testCase.query)
        #expect(url.description == testCase.expected)
    }

    @Test(
        "rejects invalid base URLs and paths",
        arguments: [
            ("https://api test", "x"),
            ("https://api.test/a b", "x"),
            ("https://api.test\r\n", "x"),
            ("ftp://api.test", "x"),
            ("api.test", "x"),
            ("https://", "x"),
            ("https://user:pass@api.test", "x"),
            ("https://api.test#frag", "x"),
            ("https://api.test:0", "x"),
            ("https://api.test:99999", "x"),
            ("https://api.test:80a", "x"),
            ("https://api.test", "a\r\nHost: evil"),
            ("https://api.test", "a\u{0}b"),
        ]
    )
    func rejects(base: String, path: String) {
        #expect(throws: NetworkError.self) {
            try URLBuilder.build(baseURL: base, path: path, query: [])
        }
        do {
            _ = try URLBuilder.build(baseURL: base, path: path, query: [])
        } catch {
            #expect(error.kind == .invalidRequest)
            #expect(error.phase == .building)
        }
    }

    @Test("a malformed pre-encoded query value is rejected")
    func rejectsBadEncodedValue() {
        #expect(throws: NetworkError.self) {
            try URLBuilder.build(baseURL: "https://h", path: "s", query: [QueryItem(name: "q", percentEncodedValue: "a b")])
        }
        #expect(throws: NetworkError.self) {
            try URLBuilder.build(baseURL: "https://h", path: "s", query: [QueryItem(name: "q", percentEncodedValue: "%zz")])
        }
    }

    @Test("form encoding uses + for spaces and encodes reserved characters")
    func formEncoding() throws {
        let body = RequestBody.form([("name", "Ada Lovelace"), ("expr", "1+1=2&x"), ("name", "é")])
        let text = String(decoding: try #require(body.bufferedData), as: UTF8.self)
        #expect(text == "name=Ada+Lovelace&expr=1%2B1%3D2%26x&name=%C3%A9")
        #expect(body.contentType == "application/x-www-form-urlencoded")
    }
}
