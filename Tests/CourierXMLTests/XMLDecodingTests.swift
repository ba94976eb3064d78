import Courier
import CourierXML
import Foundation
import Testing
import XMLCoder

@Suite("Decoding XML into Decodable types")
struct XMLDecodingTests {
    struct Book: Decodable, Sendable, Equatable {
        let id: Int
        let title: String
        let subtitle: String?
        let tags: [String]
    }

    struct Shelf: Decodable, Sendable, Equatable {
        let name: String
        let book: [Book]
    }

    @Test("elements, attributes, optional elements and repeated elements")
    func shapes() async throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <shelf name="fiction">
              <book id="1"><title>Dune</title><tags>classic</tags><tags>space</tags></book>
              <book id="2"><title>Emma</title><subtitle>A Novel</subtitle><tags>romance</tags></book>
            </shelf>
            """
        let shelf = try await decode(xml, as: ResponseDecoder<Shelf>.xml())
        #expect(
            shelf
                == Shelf(
                    name: "fiction",
                    book: [
                        Book(id: 1, title: "Dune", subtitle: nil, tags: ["classic", "space"]),
                        Book(id: 2, title: "Emma", subtitle: "A Novel", tags: ["romance"]),
                    ]))
    }

    struct Priced: Decodable, Sendable, Equatable {
        let item: String
        let price: Decimal
    }

    @Test("namespaces: prefixed and default namespaces decode by local name")
    func namespaces() async throws {
        let xml = """
            <p:order xmlns:p="urn:shop" xmlns="urn:shop:items"><item>pen</item><p:price>1.25</p:price></p:order>
            """
        let order = try await decode(xml, as: ResponseDecoder<Priced>.xml())
        #expect(order == Priced(item: "pen", price: Decimal(string: "1.25")!))
    }

    struct Note: Decodable, Sendable, Equatable {
        let body: String
        let empty: String
        let missing: String?
    }

    @Test("CDATA keeps markup characters as text; an empty element is an empty string; a missing one is nil")
    func textForms() async throws {
        let xml = "<note><body><![CDATA[a < b & \"c\"]]></body><empty/></note>"
        let note = try await decode(xml, as: ResponseDecoder<Note>.xml())
        #expect(note == Note(body: "a < b & \"c\"", empty: "", missing: nil))
    }

    struct Event: Decodable, Sendable, Equatable {
        let at: Date
    }

    @Test("dates are ISO 8601 by default; the strategy is configurable")
    func dates() async throws {
        let iso = try await decode("<event><at>2026-11-24T08:00:00Z</at></event>", as: ResponseDecoder<Event>.xml())
        #expect(iso.at == Date(timeIntervalSince1970: 1_795_507_200))
        let decoder = XMLCoding.makeDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let seconds = try await decode("<event><at>60</at></event>", as: ResponseDecoder<Event>.xml(decoder))
        #expect(seconds.at == Date(timeIntervalSince1970: 60))
    }

    struct SnakeCase: Decodable, Sendable, Equatable {
        let firstName: String
    }

    @Test("key strategies: snake_case elements into camelCase properties")
    func keyStrategy() async throws {
        let decoder = XMLCoding.makeDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let value = try await decode("<person><first_name>Ada</first_name></person>", as: ResponseDecoder<SnakeCase>.xml(decoder))
        #expect(value == SnakeCase(firstName: "Ada"))
    }

    @Test("unknown elements and attributes are ignored")
    func unknownIgnored() async throws {
        let xml = "<note extra=\"1\"><body>hi</body><empty></empty><surprise><deep>1</deep></surprise></note>"
        let note = try await decode(xml, as: ResponseDecoder<Note>.xml())
        #expect(note == Note(body: "hi", empty: "", missing: nil))
    }

    @Test("the decode time is measured apart from the network time")
    func decodeTimeMeasured() async throws {
        let (client, _) = try mockClient(body: "<note><body>x</body><empty/></note>")
        let response = try await client.response(for: GetDocument(decoder: ResponseDecoder<Note>.xml()))
        #expect(response.value.body == "x")
        #expect(response.metrics.decode != nil)
        #expect(response.metrics.network != nil)
    }

    @Test(
        "a mismatch fails as a decoding error that names the element path",
        arguments: [
            // (document, expected path)
            (
                "<shelf name=\"x\"><book id=\"1\"><title>A</title></book><book id=\"two\"><title>B</title></book></shelf>",
                "/shelf/book[2]/id"
            ),
            ("<shelf name=\"x\"><book id=\"1\"></book></shelf>", "/shelf/book[1]/title"),
            ("<shelf><book id=\"1\"><title>A</title></book></shelf>", "/shelf/name"),
        ])
    func mismatchNamesPath(document: String, path: String) async throws {
        let error = try #require(try await decodingError(document, as: ResponseDecoder<Shelf>.xml()))
        #expect(error.kind == .decoding)
        #expect(error.phase == .decoding)
        let xml = try #require(error.underlying as? XMLDecodingError)
        #expect(xml.path == path, "\(xml)")
        #expect(error.message.contains(path))
        #expect(error.responseBody == Data(document.utf8))
    }

    @Test(
        "a body that is not XML fails as a decoding error, never as success or a crash",
        arguments: ["", "{\"name\":\"x\"}", "plain text", "<shelf name='x'>", "<a></b>", "<a>\u{0}</a>", "<<<>>>", "<a b='1' b='2'/>"])
    func notXML(body: String) async throws {
        let error = try #require(try await decodingError(body, as: ResponseDecoder<Shelf>.xml()))
        #expect(error.kind == .decoding)
        #expect(error.underlying is XMLDecodingError)
    }
}
