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
