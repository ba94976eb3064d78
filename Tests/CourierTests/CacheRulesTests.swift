import HTTPTypes
import Testing

@testable import Courier
@testable import CourierCache

/// The response cache's rules (RFC 9111), data-driven: dates, `Cache-Control`, freshness and age,
/// what may be stored, and `Vary`.
@Suite("Cache rules (RFC 9111)")
struct CacheRulesTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's example.
    static let example: Int64 = 784_111_777

    @Test(
        "the three HTTP date formats parse to the same instant",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "  sun, 06 nov 1994 08:49:37 gmt ",
        ])
    func dateFormats(text: String) {
        #expect(HTTPDate(text)?.seconds == Self.example)
    }

    @Test(
        "invalid dates are nil, never a guess",
        arguments: [
            "", "0", "-1", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 2020 00:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Funday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 94", "Sun, 06 Nov 1994 08:49:3x GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " x", count: 40),
        ])
    func invalidDates(text: String) {
        #expect(HTTPDate(text) == nil)
    }

    @Test(
        "the preferred format round-trips",
        arguments: [
            ("Sun, 06 Nov 1994 08:49:37 GMT", Int64(784_111_777)), ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199), ("Wed, 01 Mar 2000 12:00:00 GMT", 951_912_000),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ])
    func roundTrip(text: String, seconds: Int64) {
        #expect(HTTPDate(text)?.seconds == seconds)
        #expect(HTTPDate(seconds: seconds).imfFixdate == text)
    }

    struct ControlRow: Sendable, CustomTestStringConvertible {
        var fields: [String]
        var check: @Sendable (CacheControl) -> Bool
        var testDescription: String { fields.description }
    }

    static let controlRows: [ControlRow] = [
        ControlRow(fields: ["max-age=60"]) { $0.maxAge == 60 && !$0.hasInvalidFreshness },
        ControlRow(fields: ["MAX-AGE=60"]) { $0.maxAge == 60 },
        ControlRow(fields: ["max-age=\"60\""]) { $0.maxAge == 60 && !$0.hasInvalidFreshness },
        ControlRow(fields: ["max-age=60, max-age=60"]) { $0.maxAge == 60 && !$0.hasInvalidFreshness },
        ControlRow(fields: ["max-age=60", "max-age=30"]) { $0.hasInvalidFreshness },
        ControlRow(fields: ["max-age=abc"]) { $0.hasInvalidFreshness && $0.maxAge == nil },
        ControlRow(fields: ["max-age"]) { $0.hasInvalidFreshness },
        ControlRow(fields: ["max-age=-5"]) { $0.hasInvalidFreshness },
        ControlRow(fields: ["max-age=99999999999999999999"]) { $0.maxAge == CacheControl.maxDeltaSeconds },
        ControlRow(fields: ["no-cache=\"Set-Cookie, X-Foo\", max-age=5"]) { $0.noCache && $0.maxAge == 5 },
        ControlRow(fields: ["private, no-store"]) { $0.isPrivate && $0.noStore && !$0.isPublic },
        ControlRow(fields: ["public", "must-revalidate"]) { $0.isPublic && $0.mustRevalidate },
        ControlRow(fields: ["proxy-revalidate"]) { $0.mustRevalidate },
        ControlRow(fields: ["max-stale"]) { $0.maxStale == .some(nil) },
        ControlRow(fields: ["max-stale=10"]) { $0.maxStale == .some(10) },
        ControlRow(fields: ["min-fresh=20, only-if-cached"]) { $0.minFresh == 20 && $0.onlyIfCached },
        ControlRow(fields: ["stale-if-error=300, stale-while-revalidate=30"]) { $0.staleIfError == 300 && $0.staleWhileRevalidate == 30 },
        ControlRow(fields: ["s-maxage=100, immutable"]) { $0.sharedMaxAge == 100 && $0.immutable && $0.maxAge == nil },
        ControlRow(fields: ["foo=bar, max-age=1, x-ext=\"a,b\""]) { $0.maxAge == 1 && !$0.hasInvalidFreshness },
        ControlRow(fields: [",, max-age=1 ,"]) { $0.maxAge == 1 },
        ControlRow(fields: [" max-age = 7 "]) { $0.maxAge == 7 },
        ControlRow(fields: [""]) { $0 == CacheControl() },
        ControlRow(fields: ["\"unterminated, max-age=1"]) { $0.maxAge == nil },
        ControlRow(fields: [Array(repeating: "public", count: 100).joined(separator: ",") + ", max-age=9"]) {
            $0.maxAge == nil && $0.isPublic
        },
    ]

    @Test("Cache-Control directives", arguments: controlRows)
    func cacheControl(row: ControlRow) {
        #expect(row.check(CacheControl(fields: row.fields)))
    }

    struct FreshnessRow: Sendable, CustomTestStringConvertible {
        var name: String
        var status = 200
        var fields: [(HTTPField.Name, String)]
        /// Seconds after the example date: request sent, response received, now.
        var sent: Int64 = 0
        var received: Int64 = 0
        var now: Int64
        var request: [String] = []
        var lifetime: Int64
        var age: Int64
        var fresh: Bool
        var testDescription: String { name }
    }

    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"

    static let freshnessRows: [FreshnessRow] = [
        FreshnessRow(
            name: "max-age, young", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 30, lifetime: 60, age: 30, fresh: true),
        FreshnessRow(
            name: "max-age, old", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 60, lifetime: 60, age: 60, fresh: false),
        FreshnessRow(
            name: "Age counts", fields: [(.date, date), (.cacheControl, "max-age=60"), (.age, "50")], now: 11, lifetime: 60, age: 61,
            fresh: false),
        FreshnessRow(
            name: "response delay counts", fields: [(.date, date), (.cacheControl, "max-age=60")], sent: 0, received: 20, now: 20,
            lifetime: 60, age: 20, fresh: true),
        FreshnessRow(
            name: "apparent age from a Date in the past", fields: [(.date, date), (.cacheControl, "max-age=60")], sent: 40, received: 40,
            now: 50, lifetime: 60, age: 50, fresh: true),
        FreshnessRow(
            name: "Expires minus Date", fields: [(.date, date), (.expires, "Sun, 06 Nov 1994 08:51:17 GMT")], now: 99, lifetime: 100,
            age: 99, fresh: true),
        FreshnessRow(
            name: "Expires 0 is already expired", fields: [(.date, date), (.expires, "0")], now: 0, lifetime: 0, age: 0, fresh: false),
        FreshnessRow(
            name: "max-age wins over Expires",
            fields: [(.date, date), (.expires, "Sun, 06 Nov 1994 08:51:17 GMT"), (.cacheControl, "max-age=5")],
            now: 10, lifetime: 5, age: 10, fresh: false),
        FreshnessRow(
            name: "two different Expires: expired",
            fields: [(.date, date), (.expires, "Sun, 06 Nov 1994 08:51:17 GMT"), (.expires, "Sun, 06 Nov 1994 09:51:17 GMT")], now: 0,
            lifetime: 0, age: 0, fresh: false),
        FreshnessRow(
            name: "conflicting max-age: stale", fields: [(.date, date), (.cacheControl, "max-age=60, max-age=120")], now: 1, lifetime: 0,
            age: 1, fresh: false),
        FreshnessRow(
            name: "heuristic: a tenth of the time since Last-Modified",
            fields: [(.date, date), (.lastModified, "Sun, 06 Nov 1994 08:33:57 GMT")], now: 50, lifetime: 94, age: 50, fresh: true),
        FreshnessRow(
            name: "heuristic: at most a day", fields: [(.date, date), (.lastModified, "Sun, 06 Nov 1974 08:49:37 GMT")], now: 86_399,
            lifetime: 86_400, age: 86_399, fresh: true),
        FreshnessRow(
            name: "no heuristic for a 500", status: 500, fields: [(.date, date), (.lastModified, "Sun, 06 Nov 1974 08:49:37 GMT")], now: 1,
            lifetime: 0, age: 1, fresh: false),
        FreshnessRow(
            name: "no-cache is never fresh", fields: [(.date, date), (.cacheControl, "max-age=60, no-cache")], now: 1, lifetime: 60, age: 1,
            fresh: false),
        FreshnessRow(
            name: "request max-age shortens", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 20, request: ["max-age=10"],
            lifetime: 60, age: 20, fresh: false),
        FreshnessRow(
            name: "request min-fresh", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 50, request: ["min-fresh=20"],
            lifetime: 60,
            age: 50, fresh: false),
        FreshnessRow(
            name: "request max-stale accepts stale", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 80,
            request: ["max-stale=30"], lifetime: 60, age: 80, fresh: true),
        FreshnessRow(
            name: "request max-stale, too stale", fields: [(.date, date), (.cacheControl, "max-age=60")], now: 100,
            request: ["max-stale=30"], lifetime: 60, age: 100, fresh: false),
        FreshnessRow(
            name: "must-revalidate refuses max-stale", fields: [(.date, date), (.cacheControl, "max-age=60, must-revalidate")], now: 80,
            request: ["max-stale"], lifetime: 60, age: 80, fresh: false),
        FreshnessRow(
            name: "no Date: the arrival time", fields: [(.cacheControl, "max-age=60")], sent: 5, received: 5, now: 10, lifetime: 60, age: 5,
            fresh: true),
        FreshnessRow(
            name: "a huge Age saturates", fields: [(.date, date), (.cacheControl, "max-age=60"), (.age, "999999999999999999999")], now: 0,
            lifetime: 60, age: CacheControl.maxDeltaSeconds, fresh: false),
    ]

    @Test("freshness lifetime, current age and freshness", arguments: freshnessRows)
    func freshness(row: FreshnessRow) {
        var fields = HTTPFields()
        for (name, value) in row.fields { fields.append(HTTPField(name: name, value: value)) }
        let base = Self.example
        let stored = StoredFreshness(status: row.status, fields: fields, requestTime: base + row.sent, responseTime: base + row.received)
        #expect(stored.lifetime == row.lifetime)
        #expect(stored.currentAge(now: base + row.now) == row.age)
        #expect(stored.isFresh(now: base + row.now, request: CacheControl(fields: row.request)) == row.fresh)
    }

    struct StoringRow: Sendable, CustomTestStringConvertible {
        var name: String
        var method: HTTPRequest.Method = .get
        var requestFields: [(HTTPField.Name, String)] = []
        var status = 200
        var fields: [(HTTPField.Name, String)]
        var refusal: StoringRules.Refusal?
        var testDescription: String { name }
    }

    static let storingRows: [StoringRow] = [
        StoringRow(name: "GET with max-age", fields: [(.cacheControl, "max-age=60")], refusal: nil),
        StoringRow(name: "HEAD with max-age", method: .head, fields: [(.cacheControl, "max-age=60")], refusal: nil),
        StoringRow(name: "POST", method: .post, fields: [(.cacheControl, "max-age=60")], refusal: .method),
        StoringRow(name: "206", status: 206, fields: [(.cacheControl, "max-age=60")], refusal: .status),
        StoringRow(name: "304", status: 304, fields: [(.cacheControl, "max-age=60")], refusal: .status),
        StoringRow(name: "response no-store", fields: [(.cacheControl, "max-age=60, no-store")], refusal: .noStore),
        StoringRow(
            name: "request no-store", requestFields: [(.cacheControl, "no-store")], fields: [(.cacheControl, "max-age=60")],
            refusal: .noStore),
        StoringRow(
            name: "credentials, max-age only", requestFields: [(.authorization, "Bearer t")], fields: [(.cacheControl, "max-age=60")],
            refusal: .credentials),
        StoringRow(
            name: "credentials, public", requestFields: [(.authorization, "Bearer t")], fields: [(.cacheControl, "public, max-age=60")],
            refusal: nil),
        StoringRow(
            name: "credentials, must-revalidate", requestFields: [(.authorization, "Bearer t")],
            fields: [(.cacheControl, "max-age=60, must-revalidate")], refusal: nil),
        StoringRow(
            name: "credentials, s-maxage and a validator", requestFields: [(.authorization, "Bearer t")],
            fields: [(.cacheControl, "s-maxage=60"), (.eTag, "\"v1\"")], refusal: nil),
        // s-maxage allows the reuse, but gives a private cache no lifetime: with nothing to
        // revalidate with, there is nothing worth storing.
        StoringRow(
            name: "credentials, s-maxage alone", requestFields: [(.authorization, "Bearer t")], fields: [(.cacheControl, "s-maxage=60")],
            refusal: .noLifetime),
        StoringRow(name: "Vary: *", fields: [(.cacheControl, "max-age=60"), (.vary, "Accept, *")], refusal: .vary),
        StoringRow(name: "Vary: Accept", fields: [(.cacheControl, "max-age=60"), (.vary, "Accept")], refusal: nil),
        StoringRow(name: "200, nothing to go by", fields: [], refusal: .noLifetime),
        StoringRow(name: "200, an ETag only (revalidated each time)", fields: [(.eTag, "\"v1\"")], refusal: nil),
        StoringRow(name: "500 without a lifetime", status: 500, fields: [(.eTag, "\"v1\"")], refusal: .noLifetime),
        StoringRow(name: "500 with max-age", status: 500, fields: [(.cacheControl, "max-age=60")], refusal: nil),
        // One cache serves every caller: a private answer needs credentials to be scoped by.
        StoringRow(
            name: "private, no credentials", fields: [(.cacheControl, "private, max-age=60")], refusal: .privateWithoutCredentials),
        StoringRow(
            name: "private, an API key", requestFields: [(HTTPField.Name("X-Api-Key")!, "k")],
            fields: [(.cacheControl, "private, max-age=60")], refusal: nil),
        StoringRow(
            name: "private, a cookie", requestFields: [(.cookie, "s=1")], fields: [(.cacheControl, "private, max-age=60")], refusal: nil),
    ]

    @Test("what may be stored", arguments: storingRows)
    func storing(row: StoringRow) {
        var requestFields = HTTPFields()
        for (name, value) in row.requestFields { requestFields.append(HTTPField(name: name, value: value)) }
        var fields = HTTPFields()
        for (name, value) in row.fields { fields.append(HTTPField(name: name, value: value)) }
        let request = HTTPRequest(method: row.method, scheme: "https", authority: "api.test", path: "/x", headerFields: requestFields)
        let freshness = StoredFreshness(status: row.status, fields: fields, requestTime: 0, responseTime: 0)
        let refusal = StoringRules.refusal(
            request: request, requestControl: CacheControl(fields: requestFields[values: .cacheControl]), freshness: freshness,
            responseFields: fields,
            carriesCredentials: requestFields.contains { CredentialScope.isCredential($0.name.canonicalName, secretNames: []) })
        #expect(refusal == row.refusal)
    }

    @Test("unsafe methods that succeed invalidate; errors and safe methods do not")
    func invalidation() {
        #expect(StoringRules.invalidates(method: .post, status: 201))
        #expect(StoringRules.invalidates(method: .delete, status: 204))
        #expect(StoringRules.invalidates(method: .put, status: 303))
        #expect(!StoringRules.invalidates(method: .post, status: 500))
        #expect(!StoringRules.invalidates(method: .patch, status: 404))
        #expect(!StoringRules.invalidates(method: .get, status: 200))
        #expect(!StoringRules.invalidates(method: .head, status: 200))
    }

    @Test("Vary: the nominated request fields decide, compared after light normalisation")
    func vary() throws {
        func fields(_ pairs: [(String, String)]) -> HTTPFields {
            var fields = HTTPFields()
            for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return fields
        }
        let key = FingerprintKey(1, 2, 3, 4)
        let stored = try #require(
            VaryKey(vary: ["Accept-Encoding, accept", "X-Tenant"], request: fields([("Accept-Encoding", "gzip, br")]), key: key))
        #expect(stored.names == ["accept", "accept-encoding", "x-tenant"])
        #expect(stored.matches(fields([("accept-encoding", "gzip,br")]), key: key))
        #expect(stored.matches(fields([("Accept-Encoding", "gzip"), ("Accept-Encoding", "br")]), key: key))
        #expect(!stored.matches(fields([("Accept-Encoding", "br, gzip")]), key: key), "order matters")
        #expect(
            !stored.matches(fields([("Accept-Encoding", "gzip, br"), ("X-Tenant", "a")]), key: key),
            "a field the stored request did not have")
        #expect(!stored.matches(fields([]), key: key))
        // The values are kept as fingerprints: never the value, and another key's do not match.
        #expect(!stored.values.contains { $0?.contains("gzip") == true })
        #expect(!stored.matches(fields([("accept-encoding", "gzip,br")]), key: FingerprintKey(5, 6, 7, 8)))
        let secret = try #require(VaryKey(vary: ["Cookie"], request: fields([("Cookie", "session=s3cr3t")]), key: key))
        #expect(secret.values.allSatisfy { $0?.contains("s3cr3t") == false })
        #expect(VaryKey(vary: ["*"], request: HTTPFields(), key: key) == nil)
        #expect(VaryKey(vary: [(0..<40).map { "X-\($0)" }.joined(separator: ",")], request: HTTPFields(), key: key) == nil)
    }
}
