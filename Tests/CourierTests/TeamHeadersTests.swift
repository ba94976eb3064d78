import Courier
import CourierMock
import Foundation
import Logging
import Testing

@Suite("Team headers")
struct TeamHeadersTests {
    struct Call: Endpoint {
        typealias Output = Data
        var path: String
        var team: String?
        var headers: RequestHeaders = [:]
    }

    /// One row of the precedence table: which source's `X-Source` reaches the wire.
    struct Row: Sendable, CustomTestStringConvertible {
        var team: String?
        var path: String
        var own: String?
        var expected: String
        var testDescription: String { "team \(team ?? "none"), path \(path), own \(own ?? "none") → \(expected)" }
    }

    static let rows: [Row] = [
        Row(team: nil, path: "other", own: nil, expected: "client-wide"),
        Row(team: "pay", path: "other", own: nil, expected: "team"),
        Row(team: "pay", path: "v1/users", own: nil, expected: "team+path"),
        Row(team: "pay", path: "v1beta/users", own: nil, expected: "team"),
        Row(team: "search", path: "v1/users", own: nil, expected: "path"),
        Row(team: "pay", path: "v1/users", own: "own", expected: "own"),
        Row(team: nil, path: "v1", own: nil, expected: "path"),
    ]

    static func rules() throws -> [HeaderRule] {
        [
            try HeaderRule(pathPrefix: "/v1", headers: ["X-Source": .fixed("path")]),
            try HeaderRule(team: "pay", pathPrefix: "/v1", headers: ["X-Source": .fixed("team+path")]),
            try HeaderRule(team: "pay", headers: ["X-Source": .fixed("team")]),
            try HeaderRule(headers: ["X-Source": .fixed("client-wide"), "X-Request-ID": .requestID]),
        ]
    }

    @Test("precedence: own header > most specific rule > client-wide rule > default header", arguments: rows)
    func precedence(row: Row) async throws {
        let mock = MockTransport()
        mock.stub(nil, "/\(row.path)", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.defaultHeaders = ["X-Source": "default"]
        configuration.headerRules = try Self.rules()
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: row.path, team: row.team, headers: row.own.map { ["X-Source": $0] } ?? [:]))
        let fields = try #require(mock.recordedRequests.first).head.headerFields
        #expect(fields[values: HTTPField.Name("X-Source")!] == [row.expected])
        #expect(fields[HTTPField.Name("X-Request-ID")!]?.isEmpty == false)
    }

    @Test("without rules, the default header stays")
    func defaultsWithoutRules() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.defaultHeaders = ["X-Source": "default"]
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "x"))
        #expect(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("X-Source")!] == "default")
    }

    @Test("a host rule matches only its host")
    func hostRule() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test:8443", transport: "mock")
        configuration.headerRules = [
            try HeaderRule(host: "api.test", headers: ["X-Host": .fixed("yes")]),
            try HeaderRule(host: "elsewhere.test", headers: ["X-Else": .fixed("no")]),
        ]
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "x"))
        let fields = try #require(mock.recordedRequests.first).head.headerFields
        #expect(fields[HTTPField.Name("X-Host")!] == "yes")
        #expect(fields[HTTPField.Name("X-Else")!] == nil)
    }

    @Test("a computed value with CR/LF fails the call before any I/O")
    func computedInvalid() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.headerRules = [try HeaderRule(headers: ["X-Bad": .computed { _, _ in "a\r\nInjected: 1" }])]
        let client = try NetworkClient(configuration: configuration, transport: mock)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Call(path: "x")) }
        #expect(error?.kind == .invalidRequest)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("invalid rules are refused with the key named", arguments: ["Bad Name", "X-Ok"])
    func invalidRules(name: String) throws {
        if name == "X-Ok" {
            #expect(throws: ConfigurationError.self) { try HeaderRule(headers: [name: .fixed("line\nbreak")]) }
            #expect(throws: ConfigurationError.self) { try HeaderRule(pathPrefix: "v1", headers: [name: .fixed("x")]) }
        } else {
            let error = #expect(throws: ConfigurationError.self) { try HeaderRule(headers: [name: .fixed("x")]) }
            #expect(error?.key == "headerRules")
        }
    }

    @Test("rules, retry, failure level and metrics load from the configuration file")
    func fromFile() async throws {
        let json = """
            { "headerRules": [ { "team": "pay", "headers": { "X-Team": "pay", "X-Request-ID": "{requestID}" } },
                               { "pathPrefix": "/v1", "headers": { "X-Version": "1" }, "secret": true } ],
              "retry": { "maxAttempts": 4, "baseDelay": 0.01, "statuses": [503] },
              "failureLogLevel": "error", "metrics": false }
            """
        let configuration = try ClientConfiguration(baseURL: "https://api.test", transport: "mock")
            .applyingJSON(Data(json.utf8), source: "test.json")
        #expect(configuration.headerRules.count == 2)
        #expect(configuration.retry?.maxAttempts == 4)
        #expect(configuration.retry?.baseDelay == .milliseconds(10))
        #expect(configuration.retry?.retryableStatuses == [503])
        #expect(configuration.failureLogLevel == .error)
        #expect(configuration.exportsMetrics == false)
        let mock = MockTransport()
        mock.stub(nil, "/v1/x", .status(200))
        let client = try NetworkClient(configuration: configuration, transport: mock)
        _ = try await client.send(Call(path: "v1/x", team: "pay"))
        let fields = try #require(mock.recordedRequests.first).head.headerFields
        #expect(fields[HTTPField.Name("X-Team")!] == "pay")
        #expect(fields[HTTPField.Name("X-Version")!] == "1")
        #expect(fields[HTTPField.Name("X-Request-ID")!]?.isEmpty == false)
    }

    @Test(
        "bad middleware keys in the file name the key",
        arguments: [
            (#"{ "retry": { "maxAtempts": 3 } }"#, "retry.maxAtempts"),
            (#"{ "retry": { "maxAttempts": 11 } }"#, "retry.maxAttempts"),
            (#"{ "headerRules": [ { "teem": "x", "headers": {} } ] }"#, "headerRules.0.teem"),
            (#"{ "headerRules": [ { "pathPrefix": "v1", "headers": {} } ] }"#, "headerRules.0"),
            (#"{ "failureLogLevel": "loud" }"#, "failureLogLevel"),
        ])
    func badFile(json: String, key: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ClientConfiguration().applyingJSON(Data(json.utf8), source: "test.json")
        }
        #expect(error?.key == key)
    }
}

/// Rules whose header names are all distinct take a faster path (each rule's fields appended as a
/// block). These cases pin that it gives the same headers, in the same order, as the general one.
@Suite("Team headers: rules with distinct names")
struct DistinctTeamHeadersTests {
    /// Captures what the network middleware sees: the headers and the secret names.
    final class Capture: Middleware, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: (fields: HTTPFields, secrets: Set<String>)?

        var last: (fields: HTTPFields, secrets: Set<String>)? { lock.withLock { seen } }

        func intercept(
            _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
        ) async throws -> TransportResponse {
            lock.withLock { seen = (request.headerFields, context.secretHeaderNames) }
            return try await next(request, body, context)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var team: String?
        var own: RequestHeaders
        /// The headers on the wire, in order, with `<id>` for the request id.
        var expected: [(String, String)]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a team call gets the client-wide rule, then the team rule, after the default header", team: "pay", own: [:],
            expected: [("X-Default", "d"), ("X-Service", "bench"), ("X-Request-ID", "<id>"), ("X-Team", "pay"), ("X-Team-Key", "k")]),
        Case(
            name: "a call without a team gets the client-wide rule only", team: nil, own: [:],
            expected: [("X-Default", "d"), ("X-Service", "bench"), ("X-Request-ID", "<id>")]),
        Case(
            name: "an own header of another name is kept before the rules' headers", team: "pay", own: ["Accept": "text/plain"],
            expected: [
                ("X-Default", "d"), ("Accept", "text/plain"), ("X-Service", "bench"), ("X-Request-ID", "<id>"), ("X-Team", "pay"),
                ("X-Team-Key", "k"),
            ]),
        Case(
            name: "an own header of a rule's name wins over the rule", team: "pay", own: ["X-Team": "mine"],
            expected: [("X-Default", "d"), ("X-Team", "mine"), ("X-Service", "bench"), ("X-Request-ID", "<id>"), ("X-Team-Key", "k")]),
    ]

    @Test("the headers and their order match the precedence rules", arguments: cases)
    func headers(row: Case) async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.defaultHeaders = ["X-Default": "d"]
        configuration.headerRules = [
            try HeaderRule(team: "pay", headers: ["X-Team": .fixed("pay")]),
            try HeaderRule(team: "pay", headers: ["X-Team-Key": .fixed("k")], secret: true),
            try HeaderRule(headers: ["X-Service": .fixed("bench"), "X-Request-ID": .requestID]),
        ]
        let capture = Capture()
        let client = try NetworkClient(configuration: configuration, transport: mock, networkMiddleware: [capture])
        let response = try await client.response(for: TeamHeadersTests.Call(path: "x", team: row.team, headers: row.own))
        _ = response
        let seen = try #require(capture.last)
        let requestID = try #require(seen.fields[HTTPField.Name("X-Request-ID")!])
        #expect(!requestID.isEmpty)
        // The client adds the codings Courier decodes with its default headers (see BridgeLink).
        #expect(seen.fields[.acceptEncoding] == Decompression.acceptEncoding)
        let actual = seen.fields.filter { $0.name != .acceptEncoding }.map { ($0.name.rawName, $0.value == requestID ? "<id>" : $0.value) }
        #expect(actual.map(\.0) == row.expected.map(\.0))
        #expect(actual.map(\.1) == row.expected.map(\.1))
        #expect(seen.secrets.contains("x-team-key") == (row.team == "pay"))
        #expect(mock.recordedRequests.first?.head.headerFields == seen.fields)
    }

    @Test("each call gets its own request id")
    func requestIDsDiffer() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/x", .status(200))
        var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
        configuration.headerRules = [try HeaderRule(headers: ["X-Request-ID": .requestID, "X-Trace": .requestID])]
        let client = try NetworkClient(configuration: configuration, transport: mock)
        for _ in 0..<3 { _ = try await client.send(TeamHeadersTests.Call(path: "x")) }
        let ids = mock.recordedRequests.compactMap { $0.head.headerFields[HTTPField.Name("X-Request-ID")!] }
        #expect(Set(ids).count == 3)
        // The form: the process's random prefix (eight base-32 digits), "-", then a counter in
        // lowercase base 32 that grows with every call in the process; at most 15 bytes, so the
        // string is stored inline.
        let parts = ids.map { $0.split(separator: "-") }
        let digits = "0123456789abcdefghijklmnopqrstuv"
        #expect(parts.allSatisfy { $0.count == 2 && $0.allSatisfy { part in part.allSatisfy { digits.contains($0) } } })
        #expect(parts.allSatisfy { $0.first?.count == 8 })
        #expect(ids.allSatisfy { $0.utf8.count <= 15 })
        #expect(Set(parts.map { $0.first }).count == 1, "one prefix per process")
        let counters = parts.compactMap { $0.last.flatMap { UInt64($0, radix: 32) } }
        #expect(counters.count == 3 && zip(counters, counters.dropFirst()).allSatisfy { $1 > $0 }, "\(ids)")
        #expect(
            mock.recordedRequests.allSatisfy {
                $0.head.headerFields[HTTPField.Name("X-Trace")!] == $0.head.headerFields[HTTPField.Name("X-Request-ID")!]
            })
    }
}
