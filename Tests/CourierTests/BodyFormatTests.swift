import Courier
import Testing

@Suite("Reading a body's format from its Content-Type")
struct BodyFormatTests {
    @Test(
        "media types, parameters, case and whitespace",
        arguments: [
            ("application/json", BodyFormat.json), ("Application/JSON; charset=utf-8", .json), ("text/json", .json),
            ("application/problem+json", .json), (" application/vnd.api+json ", .json),
            ("application/xml", .xml), ("TEXT/XML;charset=UTF-8", .xml), ("application/soap+xml; action=\"x\"", .xml),
            ("application/atom+xml", .xml), ("", .unstated), ("  ; charset=utf-8", .unstated),
            ("text/html", .other("text/html")), ("application/jsonx", .other("application/jsonx")), ("json", .other("json")),
            ("application/xml-dtd", .other("application/xml-dtd")), ("+xml", .xml),
        ] as [(String, BodyFormat)])
    func formats(contentType: String, expected: BodyFormat) {
        #expect(BodyFormat(contentType: contentType) == expected)
    }

    @Test("no Content-Type at all")
    func missing() {
        #expect(BodyFormat(contentType: nil) == .unstated)
    }
}
