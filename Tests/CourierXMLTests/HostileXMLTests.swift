import Courier
import CourierXML
import Foundation
import Testing

@Suite("Hostile XML is refused before a parser builds anything")
struct HostileXMLTests {
    struct Anything: Decodable, Sendable {
        let value: String?
    }

    static let billionLaughs: String = {
        var doc = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        var previous = "lol"
        for level in 1...9 {
            doc += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
            previous = "lol\(level)"
        }
        return doc + "]><lolz><value>&\(previous);</value></lolz>"
    }()

    @Test(
        "DTDs are refused: external entities, entity expansion and bare declarations",
        arguments: [
            "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><r><value>&e;</value></r>",
            "<!DOCTYPE r SYSTEM \"http://127.0.0.1:1/evil.dtd\"><r><value>x</value></r>",
            "<!-- hi --><!DOCTYPE r><r><value>x</value></r>",
            "<r><value>x</value></r><!DOCTYPE r>",
            billionLaughs,
        ])
    func dtdRefused(document: String) async throws {
        let error = try #require(try await decodingError(document, as: ResponseDecoder<Anything>.xml()))
        #expect(error.kind == .decoding)
        let xml = try #require(error.underlying as? XMLDecodingError)
        #expect(xml.reason.contains("DTD"))
    }

    @Test("a DOCTYPE inside CDATA or a comment is only text")
    func doctypeAsText() async throws {
        let value = try await decode(
            "<r><!-- <!DOCTYPE x> --><value><![CDATA[<!DOCTYPE x>]]></value></r>", as: ResponseDecoder<Anything>.xml())
        #expect(value.value == "<!DOCTYPE x>")
    }

    @Test("a document deeper than the limit fails cleanly; one at the limit decodes")
    func depth() async throws {
        func nested(_ depth: Int) -> String {
            String(repeating: "<a>", count: depth - 1) + "<value>x</value>" + String(repeating: "</a>", count: depth - 1)
        }
        let limits = XMLLimits(maxDepth: 10)
        _ = try await decode(nested(10), as: ResponseDecoder<Anything>.xml(limits: limits))
        let error = try #require(try await decodingError(nested(11), as: ResponseDecoder<Anything>.xml(limits: limits)))
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.reason.contains("deeper than the limit of 10") == true)
        // The default limit stops a deep document long before recursion could exhaust the stack.
        let deep = try #require(try await decodingError(nested(100_000), as: ResponseDecoder<Anything>.xml()))
        #expect((deep.underlying as? XMLDecodingError)?.reason.contains("deeper than the limit of 100") == true)
    }

    @Test("self-closing elements and quoted '>' do not confuse the depth count")
    func depthCountIsExact() async throws {
        let limits = XMLLimits(maxDepth: 2)
        let value = try await decode(
            "<r note='a > b' other=\"/>\"><x/><x/><x/><value>y</value></r>", as: ResponseDecoder<Anything>.xml(limits: limits))
        #expect(value.value == "y")
    }

    @Test("a document larger than the limit fails cleanly")
    func size() async throws {
        let big = "<r><value>" + String(repeating: "x", count: 2_000) + "</value></r>"
        let error = try #require(try await decodingError(big, as: ResponseDecoder<Anything>.xml(limits: XMLLimits(maxBytes: 1_000))))
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.reason.contains("over the limit of 1000") == true)
    }
}

@Suite("Bytes that would crash FoundationXML's parser")
struct InvalidUTF8Tests {
    struct Anything: Decodable, Sendable { let value: String? }

    @Test(
        "invalid UTF-8 in a name, an attribute or text fails as a decoding error instead of trapping",
        arguments: [
            [UInt8]("<r><".utf8) + [0xFF] + Array("name>x</".utf8) + [0xFF] + Array("name></r>".utf8),
            [UInt8]("<r a='".utf8) + [0xC3] + Array("'><value>x</value></r>".utf8),
            [UInt8]("<?xml version='1.0' encoding='UTF-8'?><r><value>".utf8) + [0xED, 0xA0, 0x80] + Array("</value></r>".utf8),
        ])
    func refused(bytes: [UInt8]) async throws {
        let (client, _) = try mockClient(bytes: Data(bytes))
        let error = try await #require(throws: NetworkError.self) {
            try await client.send(GetDocument(decoder: ResponseDecoder<Anything>.xml()))
        }
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.reason.contains("not valid UTF-8") == true)
    }

    @Test("a document that declares ISO-8859-1 is read in that encoding")
    func latin1() async throws {
        let bytes = [UInt8]("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r><value>caf".utf8) + [0xE9] + Array("</value></r>".utf8)
        let (client, _) = try mockClient(bytes: Data(bytes))
        #expect(try await client.send(GetDocument(decoder: ResponseDecoder<Anything>.xml())).value == "café")
    }
}
