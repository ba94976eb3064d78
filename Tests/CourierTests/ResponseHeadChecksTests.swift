import HTTPTypes
import Testing

@testable import Courier

@Suite("Response head checks shared by every transport")
struct ResponseHeadChecksTests {
    /// One head's Content-Length fields, as separate fields and as a transport may join them.
    struct Row: Sendable, CustomTestStringConvertible {
        var values: [String]
        var valid: Bool
        var testDescription: String { "\(values) → \(valid ? "valid" : "invalid")" }
    }

    static let rows: [Row] = [
        Row(values: [], valid: true),
        Row(values: ["5"], valid: true),
        Row(values: ["5", "5"], valid: true),
        Row(values: ["5, 5"], valid: true),
        Row(values: ["5", "10"], valid: false),
        Row(values: ["5, 10"], valid: false),
        Row(values: ["five"], valid: false),
        Row(values: ["-1"], valid: false),
        Row(values: [""], valid: false),
        Row(values: ["5,"], valid: false),
        Row(values: ["9223372036854775807"], valid: true),
        Row(values: ["9223372036854775808"], valid: false),
        Row(values: ["12345678901234567890"], valid: false),
        Row(values: ["012345678901234567890"], valid: false),
    ]

    @Test("Content-Length must be one number; identical repeats count once", arguments: rows)
    func contentLength(row: Row) {
        var fields = HTTPFields()
        for value in row.values { fields.append(HTTPField(name: .contentLength, value: value)) }
        let problem = ResponseHeadChecks.contentLengthProblem(in: fields)
        #expect((problem == nil) == row.valid)
        if let problem {
            #expect(problem.kind == .invalidResponse)
            #expect(problem.phase == .awaitingResponse)
        }
    }

    @Test("a head over the field count or the field bytes fails; one at the limit passes")
    func sizeLimits() {
        let limits = ResponseHeadLimits(maxFields: 10, maxBytes: 1024, maxInterimResponses: 0)
        func head(fields count: Int, valueBytes: Int = 1) -> HTTPResponse {
            var fields = HTTPFields()
            for index in 0..<count {
                fields.append(HTTPField(name: HTTPField.Name("x-\(index)")!, value: String(repeating: "v", count: valueBytes)))
            }
            return HTTPResponse(status: .ok, headerFields: fields)
        }
        #expect(ResponseHeadChecks.problem(in: head(fields: 10), limits: limits) == nil)
        #expect(ResponseHeadChecks.problem(in: head(fields: 11), limits: limits)?.kind == .invalidResponse)
        // Each field counts its name, its value and 4 bytes: 3 + 95 + 4 = 102, ten of them 1,020.
        #expect(ResponseHeadChecks.problem(in: head(fields: 10, valueBytes: 95), limits: limits) == nil)
        let tooBig = ResponseHeadChecks.problem(in: head(fields: 10, valueBytes: 99), limits: limits)
        #expect(tooBig?.kind == .invalidResponse)
        #expect(tooBig?.phase == .awaitingResponse)
        #expect(tooBig?.message.contains("1024") == true)
    }

    @Test(
        "field syntax: a token name with no whitespace before the colon; a value without NUL, CR, LF or controls",
        arguments: [
            ("X-A", "one", true), ("x-a", "one\ttwo", true), ("X-A", "caf\u{E9}", true), ("X-A ", "one", false), ("X-A\t", "one", false),
            ("X(A)", "one", false), ("", "one", false), ("X-A", "o\rne", false), ("X-A", "o\nne", false), ("X-A", "o\u{0}ne", false),
            ("X-A", "o\u{1}ne", false), ("X-A", "o\u{7F}ne", false),
        ]
    )
    func fieldSyntax(name: String, value: String, valid: Bool) {
        let problem = ResponseHeadChecks.fieldNameProblem(Array(name.utf8)) ?? ResponseHeadChecks.fieldValueProblem(value.utf8)
        #expect((problem == nil) == valid, "\(name.debugDescription): \(value.debugDescription) → \(problem ?? "valid")")
    }

    @Test("the limits refuse values out of range with the configuration key")
    func limitRanges() throws {
        #expect(throws: Never.self) { try ResponseHeadLimits().validate() }
        #expect(throws: ConfigurationError.self) { try ResponseHeadLimits(maxFields: 0).validate() }
        #expect(throws: ConfigurationError.self) { try ResponseHeadLimits(maxBytes: 100).validate() }
        #expect(throws: ConfigurationError.self) { try ResponseHeadLimits(maxInterimResponses: -1).validate() }
        var configuration = ClientConfiguration()
        configuration.responseHeadLimits.maxBytes = 2 << 20
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(ClientConfiguration().maxResponseBytes == 16 << 20)
    }
}
