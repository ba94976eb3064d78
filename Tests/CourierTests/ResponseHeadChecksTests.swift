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
}
