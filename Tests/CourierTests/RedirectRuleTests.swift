import CourierMock
import Foundation
import Testing

@testable import Courier

/// The follow-up link's rules, without a network.
@Suite("Redirect rules")
struct RedirectRuleTests {
    @Test(
        "redirects change the method the way clients agree on",
        arguments: [
            (301, HTTPRequest.Method.post, HTTPRequest.Method.get, false), (302, .post, .get, false), (303, .put, .get, false),
            (303, .head, .head, false), (307, .post, .post, true), (308, .put, .put, true), (302, .get, .get, true),
            (301, .head, .head, true), (301, .put, .put, true), (302, .patch, .patch, true), (302, .delete, .delete, true),
            (303, .post, .get, false), (303, .delete, .get, false),
        ])
    func methods(redirect: (status: Int, from: HTTPRequest.Method, to: HTTPRequest.Method, keepsBody: Bool)) throws {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        let request = HTTPRequest(method: redirect.from, scheme: "http", authority: "a.test", path: "/x", headerFields: fields)
        let next = try RedirectRule.follow(request, status: redirect.status, location: "http://a.test/y?q=1")
        #expect(next.request.method == redirect.to)
        #expect(next.keepsBody == redirect.keepsBody)
        #expect(next.request.path == "/y?q=1")
        #expect((next.request.headerFields[.contentType] != nil) == redirect.keepsBody)
        #expect(!next.crossesOrigin)
    }

    @Test(
        "another origin (host, port, scheme, protocol-relative) gets only the safelist; the same origin gets everything",
        arguments: [
            ("http://a.test/next", true), ("http://a.test:80/next", true), ("/next", true), ("next", true), ("HTTP://A.TEST/n", true),
            ("http://b.test/next", false), ("http://a.test:8080/next", false), ("https://a.test/next", false),
            ("//b.test:81/next", false), ("//a.test:81/next", false), ("http://127.0.0.1/next", false),
        ])
    func crossOrigin(target: (location: String, sameOrigin: Bool)) throws {
        let fields = HTTPFields([
            HTTPField(name: .authorization, value: "Bearer x"), HTTPField(name: .cookie, value: "s=1"),
            HTTPField(name: HTTPField.Name("X-Api-Key")!, value: "k"), HTTPField(name: HTTPField.Name("X-Custom")!, value: "c"),
            HTTPField(name: .accept, value: "application/json"), HTTPField(name: .userAgent, value: "svc/1"),
            HTTPField(name: HTTPField.Name("traceparent")!, value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            HTTPField(name: .acceptLanguage, value: "fr"),
        ])
        let request = HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/", headerFields: fields)
        let next = try RedirectRule.follow(request, status: 302, location: target.location, credentialNames: ["user-agent"])
        let kept = Set(next.request.headerFields.map { $0.name.canonicalName })
        #expect(next.crossesOrigin == !target.sameOrigin)
        if target.sameOrigin {
            #expect(kept == Set(fields.map { $0.name.canonicalName }))
        } else {
            // The safelist, less a name the configuration marked secret.
            #expect(kept == ["accept", "traceparent", "accept-language"])
        }
    }

    @Test(
        "a foreign scheme or https to http is refused with its own kind, naming the scheme",
        arguments: [
            ("http", "ftp://a.test/x", "ftp"), ("http", "file:///etc/passwd", "file"), ("http", "gopher://a.test/", "gopher"),
            ("http", "data:text/plain,hello", "data"), ("https", "http://a.test/x", "https to plain http"),
            ("https", "HTTP://b.test/x", "https to plain http"), ("http", "javascript:alert(1)", "javascript"),
        ])
    func refusedSchemes(case: (from: String, location: String, named: String)) {
        let request = HTTPRequest(method: .get, scheme: `case`.from, authority: "a.test", path: "/")
        let error = #expect(throws: NetworkError.self) { try RedirectRule.follow(request, status: 302, location: `case`.location) }
        #expect(error?.kind == .redirectRefused)
        #expect(error?.message.contains(`case`.named) == true)
    }

    @Test(
        "a Location with control characters or an encoded CR, LF or NUL never becomes a request",
        arguments: [
            "/next\r\nX-Injected: 1", "/a b", "/next\u{7F}", "/next%0d%0aX-Injected:%201", "/next%0AHost:%20evil", "/x%00y",
            "http://b.test/%0D%0A", "", "http://", "http:///path",
        ])
    func malformed(location: String) {
        let request = HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/")
        let error = #expect(throws: NetworkError.self) { try RedirectRule.follow(request, status: 302, location: location) }
        #expect(error?.kind == .invalidResponse)
    }

    @Test(
        "a relative Location resolves against the request's URL",
        arguments: [("/next?q=1", "/next?q=1"), ("other", "/dir/other"), ("//b.test/x", "/x"), ("?page=2", "/dir/page?page=2")]
    )
    func relativeLocations(location: String, path: String) throws {
        let request = HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/dir/page")
        let next = try RedirectRule.follow(request, status: 302, location: location)
        #expect(next.request.path == path)
        #expect(next.request.authority == (location.hasPrefix("//") ? "b.test" : "a.test"))
    }

    @Test("an IPv6 host keeps its brackets, with and without a port")
    func ipv6() throws {
        let request = HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/")
        #expect(
            try RedirectRule.follow(request, status: 302, location: "//[::ffff:127.0.0.1]:81/x").request.authority
                == "[::ffff:127.0.0.1]:81")
        #expect(try RedirectRule.follow(request, status: 302, location: "http://[::1]/x").request.authority == "[::1]")
    }

    @Test("the chain's middle follows a redirect hop by hop through the network middleware below it")
    func followUpThroughTheMiddle() async throws {
        let sent = Locked<[String]>([])
        let next: Middleware.Next = { request, _, _ in
            sent.withLock { $0.append(request.path ?? "") }
            if request.path == "/start" {
                return TransportResponse(head: HTTPResponse(status: .found, headerFields: [.location: "/end"]))
            }
            return TransportResponse(head: HTTPResponse(status: .ok))
        }
        let context = RequestContext(requestID: "r", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "test"))
        let request = HTTPRequest(method: .get, scheme: "http", authority: "a.test", path: "/start")
        let attempt = AttemptStep<PlainMiddle>(attempt: Attempt(transport: MockTransport(), deadlineHeader: nil, proxy: .none), below: next)
        let middle = FollowUpStep(
            next: BridgeStep(
                bridge: BridgeLink(decompression: Decompression(), transportDecodes: false),
                next: GateStep(networkMiddlewareBelow: true, next: attempt)))
        #expect(middle.names == ["FollowUpLink", "BridgeLink", "QueueGate"])
        let response = try await middle.run(request, RequestBody?.none, context)
        #expect(response.head.status == .ok)
        #expect(sent.withLock { $0 } == ["/start", "/end"])
        #expect(context.recorder.updated { _ in }.redirects == 1)
    }
}
