import Courier
import Foundation
import HTTPTypes
import Testing

/// The one rule every resend asks: by method, `Idempotency-Key`, body and reason.
@Suite("Repeat rule: whether a request may go again")
struct RepeatRuleTests {
    static func request(_ method: HTTPRequest.Method, key: Bool = false) -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: "https", authority: "api.test", path: "/x")
        if key { request.headerFields[RepeatRule.idempotencyKey] = "k-1" }
        return request
    }

    static var oneShot: RequestBody {
        .stream(AsyncStream<Data> { $0.finish() }, length: 0)
    }

    @Test(
        "by method and key, for each reason",
        arguments: [
            // (method, key, afterFailure, unprocessed, concurrentCopy)
            (HTTPRequest.Method.get, false, true, true, true),
            (.head, false, true, true, true),
            (.options, false, true, true, true),
            (.put, false, true, true, true),
            (.delete, false, true, true, true),
            (.trace, false, true, true, true),
            (.post, false, false, true, false),
            (.patch, false, false, true, false),
            (.post, true, true, true, false),
            (.patch, true, true, true, false),
        ])
    func byMethod(method: HTTPRequest.Method, key: Bool, afterFailure: Bool, unprocessed: Bool, concurrentCopy: Bool) {
        let request = Self.request(method, key: key)
        #expect(RepeatRule.mayRepeat(request, body: nil) == afterFailure)
        #expect(RepeatRule.mayRepeat(request, body: .text("x"), reason: .afterFailure) == afterFailure)
        #expect(RepeatRule.mayRepeat(request, body: nil, reason: .unprocessed) == unprocessed)
        #expect(RepeatRule.mayRepeat(request, body: nil, reason: .concurrentCopy) == concurrentCopy)
        #expect(RepeatRule.isIdempotent(request) == afterFailure)
        // The retry policy reads the same rule.
        #expect(RetryPolicy.mayRepeat(request, body: nil) == afterFailure)
    }

    @Test("a body that cannot be read twice never goes again, whatever the method or reason")
    func oneShotBody() {
        for reason in [RepeatRule.Reason.afterFailure, .unprocessed, .concurrentCopy] {
            #expect(!RepeatRule.mayRepeat(Self.request(.get), body: Self.oneShot, reason: reason))
            #expect(!RepeatRule.mayRepeat(Self.request(.post, key: true), body: Self.oneShot, reason: reason))
        }
        #expect(RetryPolicy.idempotentMethods == RepeatRule.idempotentMethods)
        #expect(RetryPolicy.idempotencyKey == RepeatRule.idempotencyKey)
    }
}
