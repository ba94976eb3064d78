import Courier
import CourierTestServer
@testable import CourierXML
import Foundation
import Testing
import XMLCoder

/// Courier decodes XML with a decoder of its own (over a compact tree) that follows XMLCoder's
/// conventions, so types written for XMLCoder decode the same way.
@Suite("Courier's XML decoder follows XMLCoder's conventions")
struct XMLDecoderConventionsTests {
    @Test("the sample catalogue decodes to the same value as with XMLCoder and as from JSON", arguments: [2_000, 200_000])
    func sameAsXMLCoder(bytes: Int) async throws {
        let xml = SampleDocuments.hotelsXML(approximateBytes: bytes)
        let ours = try await decode(xml, as: ResponseDecoder<SampleCatalogue>.xml())
        let xmlCoder = XMLDecoder()
        xmlCoder.shouldProcessNamespaces = true
        let theirs = try xmlCoder.decode(SampleCatalogue.self, from: Data(xml.utf8))
        #expect(ours == theirs)
        let json = try JSONDecoder().decode(SampleCatalogue.self, from: Data(SampleDocuments.hotelsJSON(approximateBytes: bytes).utf8))
        #expect(ours == json)
    }

    struct Price: Decodable, Sendable, Equatable {
        @Attribute var currency: String
        let value: Decimal
        enum CodingKeys: String, CodingKey {
            case currency
            case value = ""
        }
    }

    struct Offer: Decodable, Sendable, Equatable {
        @Attribute var id: Int
        let price: Price
        let available: Bool
        let link: URL
        let blob: Data
    }

    @Test("@Attribute, the element's own text under the key \"\", Bool, URL and base64 Data")
    func valueForms() async throws {
        let xml = """
            <offer id="9"><price currency="EUR"> 12.50 </price><available>1</available>
            <link>https://example.com/o/9</link><blob>aGk=</blob></offer>
            """
        let offer = try await decode(xml, as: ResponseDecoder<Offer>.xml())
        #expect(offer.id == 9)
        #expect(offer.price.currency == "EUR")
        #expect(offer.price.value == Decimal(string: "12.50"))
        #expect(offer.available)
        #expect(offer.link.absoluteString == "https://example.com/o/9")
        #expect(offer.blob == Data("hi".utf8))
    }

    @Test("arrays: the root's children, repeated elements, one element, none, and nested lists")
    func arrays() async throws {
        struct Tag: Decodable, Sendable, Equatable { let name: String }
        let root = try await decode("<tags><tag><name>a</name></tag><tag><name>b</name></tag></tags>", as: ResponseDecoder<[Tag]>.xml())
        #expect(root == [Tag(name: "a"), Tag(name: "b")])

        struct Post: Decodable, Sendable, Equatable {
            let tag: [String]
            let score: [Int]
        }
        #expect(
            try await decode("<post><tag>x</tag><tag>y</tag><score>3</score></post>", as: ResponseDecoder<Post>.xml())
                == Post(tag: ["x", "y"], score: [3]))
        #expect(try await decode("<post/>", as: ResponseDecoder<Post>.xml()) == Post(tag: [], score: []))

        struct Matrix: Decodable, Sendable, Equatable { let row: [[Int]] }
        let matrix = try await decode("<m><row><c>1</c><c>2</c></row><row><c>3</c></row></m>", as: ResponseDecoder<Matrix>.xml())
        #expect(matrix == Matrix(row: [[1, 2], [3]]))
    }

    @Test("optionals: absent and empty elements are nil; an element with text or attributes is not")
    func optionals() async throws {
        struct Maybe: Decodable, Sendable, Equatable {
            let a: Int?
            let b: Int?
            let c: String?
            let d: Int?
        }
        let value = try await decode("<m><b/><c>hi</c><d>4</d></m>", as: ResponseDecoder<Maybe>.xml())
        #expect(value == Maybe(a: nil, b: nil, c: "hi", d: 4))
    }

    @Test(
        "numbers out of range or malformed fail with the path",
        arguments: [
            ("<n><v>300</v></n>", "UInt8"), ("<n><v>-1</v></n>", "UInt8"), ("<n><v>1e3</v></n>", "UInt8"), ("<n><v/></n>", "UInt8"),
        ])
    func numberErrors(document: String, type: String) async throws {
        struct N: Decodable, Sendable { let v: UInt8 }
        let error = try #require(try await decodingError(document, as: ResponseDecoder<N>.xml()))
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.path == "/n/v")
        #expect(error.message.contains(type))
    }

    @Test("floats: non-finite values are refused unless the strategy names them")
    func floats() async throws {
        struct F: Decodable, Sendable { let v: Double }
        #expect(try await decodingError("<f><v>INF</v></f>", as: ResponseDecoder<F>.xml())?.kind == .decoding)
        let decoder = XMLCoding.makeDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "INF", negativeInfinity: "-INF", nan: "NaN")
        #expect(try await decode("<f><v>INF</v></f>", as: ResponseDecoder<F>.xml(decoder)).v == .infinity)
        #expect(try await decode("<f><v>-2.5e3</v></f>", as: ResponseDecoder<F>.xml()).v == -2500)
    }

    @Test("key strategies: kebab-case, Capitalized, UPPERCASE and custom")
    func keyStrategies() async throws {
        struct P: Decodable, Sendable, Equatable { let firstName: String }
        func run(_ strategy: XMLDecoder.KeyDecodingStrategy, _ xml: String) async throws -> P {
            let decoder = XMLCoding.makeDecoder()
            decoder.keyDecodingStrategy = strategy
            return try await decode(xml, as: ResponseDecoder<P>.xml(decoder))
        }
        #expect(try await run(.convertFromKebabCase, "<p><first-name>A</first-name></p>") == P(firstName: "A"))
        #expect(try await run(.convertFromCapitalized, "<p><FirstName>B</FirstName></p>") == P(firstName: "B"))
        struct Upper: Decodable, Sendable, Equatable { let firstname: String }
        let decoder = XMLCoding.makeDecoder()
        decoder.keyDecodingStrategy = .convertFromUppercase
        #expect(try await decode("<p><FIRSTNAME>C</FIRSTNAME></p>", as: ResponseDecoder<Upper>.xml(decoder)) == Upper(firstname: "C"))
        let custom: XMLDecoder.KeyDecodingStrategy = .custom { path in
            XMLNameKey(path.last.map { $0.stringValue.replacingOccurrences(of: "x-", with: "") } ?? "")
        }
        #expect(try await run(custom, "<p><x-firstName>D</x-firstName></p>") == P(firstName: "D"))
    }

    @Test("dates: ISO 8601 with and without fractional seconds, and a formatter")
    func dates() async throws {
        struct E: Decodable, Sendable { let at: Date }
        #expect(
            try await decode("<e><at>2026-11-24T08:00:00.250Z</at></e>", as: ResponseDecoder<E>.xml()).at
                == Date(timeIntervalSince1970: 1_795_507_200.25))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let decoder = XMLCoding.makeDecoder()
        decoder.dateDecodingStrategy = .formatted(formatter)
        #expect(
            try await decode("<e><at>2026-11-24</at></e>", as: ResponseDecoder<E>.xml(decoder)).at
                == Date(timeIntervalSince1970: 1_795_478_400))
        let bad = try #require(try await decodingError("<e><at>yesterday</at></e>", as: ResponseDecoder<E>.xml()))
        #expect((bad.underlying as? XMLDecodingError)?.path == "/e/at")
    }
}
