import Courier
import CourierXML
import Foundation
import Testing

@Suite("ResponseDecoder.automatic picks JSON or XML by Content-Type when CourierXML is linked")
struct AutomaticDecodingTests {
    struct Item: Decodable, Sendable, Equatable {
        let name: String
        let count: Int
    }

    static let xml = "<item><name>pen</name><count>3</count></item>"
    static let json = #"{"name":"pen","count":3}"#

    @Test(
        "XML media types decode as XML",
        arguments: [
            "application/xml", "text/xml", "text/xml; charset=utf-8", "application/soap+xml; charset=utf-8", "application/atom+xml",
            "APPLICATION/XML", " application/xml ;charset=UTF-8",
        ])
    func xmlTypes(contentType: String) async throws {
        let (client, _) = try mockClient(body: Self.xml, contentType: contentType)
        #expect(try await client.send(GetAutomatic<Item>()) == Item(name: "pen", count: 3))
    }

    @Test(
        "JSON media types, and no Content-Type at all, decode as JSON",
        arguments: ["application/json", "application/json; charset=utf-8", "application/problem+json", "text/json", nil] as [String?])
    func jsonTypes(contentType: String?) async throws {
        let (client, _) = try mockClient(body: Self.json, contentType: contentType)
        #expect(try await client.send(GetAutomatic<Item>()) == Item(name: "pen", count: 3))
    }

    @Test("another media type is tried as JSON, and a failure names the media type")
    func otherTypes() async throws {
        let (lenient, _) = try mockClient(body: Self.json, contentType: "text/plain")
        #expect(try await lenient.send(GetAutomatic<Item>()) == Item(name: "pen", count: 3))

        let (client, _) = try mockClient(body: "<html><body>hi</body></html>", contentType: "text/html; charset=utf-8")
        let error = try await #require(throws: NetworkError.self) { try await client.send(GetAutomatic<Item>()) }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("text/html"))
        #expect(error.message.contains("neither JSON nor XML"))
    }

    @Test("an XML body that does not match fails with the element path, like ResponseDecoder.xml")
    func xmlMismatch() async throws {
        let (client, _) = try mockClient(body: "<item><name>pen</name><count>many</count></item>", contentType: "text/xml")
        let error = try await #require(throws: NetworkError.self) { try await client.send(GetAutomatic<Item>()) }
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.path == "/item/count")
    }

    @Test("hostile XML is refused on the automatic path too")
    func hostileAutomatic() async throws {
        let (client, _) = try mockClient(
            body: "<!DOCTYPE r [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><item/>", contentType: "application/xml")
        let error = try await #require(throws: NetworkError.self) { try await client.send(GetAutomatic<Item>()) }
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.reason.contains("DTD") == true)
    }
}
