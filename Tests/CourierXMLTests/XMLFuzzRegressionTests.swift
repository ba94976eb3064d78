import Courier
import Foundation
import Testing

@testable import CourierXML

/// Inputs the `xml` fuzz target (Fuzz/CourierFuzz) found, kept so they stay fixed.
@Suite("XML inputs found by fuzzing")
struct XMLFuzzRegressionTests {
    /// A SOAP-like envelope with bytes that are not UTF-8 in an element name
    /// (Fuzz/Corpus/xml/fault-not-utf8 without its first byte). FoundationXML force-unwraps such a
    /// name and took the process down when the fault reader parsed it without the pre-scan.
    static let notUTF8Fault =
        Data(
            base64Encoded:
                "PDpwdkVvc25hZWxvcGUgeG1jaGVtYXMueG1sc29hcC5vcmcvc29hcC9lb3BlLyI+PHNv/////////3Rhbz5CcDp5ZDxzb2EvIj48c29hcDpSYW5nZTxzb2FwOkZhdWVtYXMueG1sb2FwOlJhbmdlPHNvYXA6RmF1ZW1hcy54bWxzAG9hcDpCL3M="
        ) ?? Data()

    @Test("the fault reader refuses a document that is not UTF-8 instead of trapping")
    func faultReaderRefusesInvalidUTF8() {
        #expect(!Self.notUTF8Fault.isEmpty)
        #expect(SOAPFaultReader.read(Self.notUTF8Fault) == nil)
    }

    @Test("the fault reader holds the document to the limits it is given")
    func faultReaderKeepsLimits() {
        let fault = Data(
            """
            <s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault>            <faultcode>s:Client</faultcode><faultstring>no</faultstring></s:Fault></s:Body></s:Envelope>
            """.utf8)
        #expect(SOAPFaultReader.read(fault)?.code == "s:Client")
        #expect(SOAPFaultReader.read(fault, limits: XMLLimits(maxBytes: 64, maxDepth: 100)) == nil)
        #expect(SOAPFaultReader.read(fault, limits: XMLLimits(maxBytes: 1 << 20, maxDepth: 2)) == nil)
    }

    struct Order: Decodable { var id: Int }

    /// Decodes as the XML response decoder does, with the default limits.
    static func decode<Value: Decodable>(_ type: Value.Type, _ data: Data) throws -> Value {
        try XMLCoding.decode(type, from: data, options: XMLTreeDecoding.Options(XMLCoding.makeDecoder()), limits: .default)
    }

    @Test(
        "a document that declares an encoding libxml2 does not know is refused before the parser sees it",
        arguments: ["UT]-8", "x-unknown", "ebcdic-cp-us", "UTF-7"])
    func unknownEncodingRefused(encoding: String) throws {
        let bytes =
            [UInt8]("<?xml version=\"1.0\" encoding=\"\(encoding)\"?><Order><id>7</id><n".utf8) + [0xFF, 0xFF]
            + Array("a>1</na></Order>".utf8)
        let error = #expect(throws: XMLDecodingError.self) {
            try Self.decode(Order.self, Data(bytes))
        }
        #expect(error?.reason.contains("does not read") == true)
        #expect(SOAPFaultReader.read(Data(bytes)) == nil)
    }

    @Test("a declared encoding libxml2 converts still decodes", arguments: ["ISO-8859-1", "windows-1252", "us-ascii"])
    func knownEncodingDecodes(encoding: String) throws {
        let bytes = Data("<?xml version=\"1.0\" encoding=\"\(encoding)\"?><Order><id>7</id></Order>".utf8)
        #expect(try Self.decode(Order.self, bytes).id == 7)
    }

    @Test(
        "a processing instruction without data is refused, not handed to FoundationXML, which dereferences null",
        arguments: ["<?x?><Order><id>7</id></Order>", "<Order><?pi   ?><id>7</id></Order>", "<Order><id>7</id></Order><?end?>"])
    func emptyInstructionRefused(document: String) {
        let error = #expect(throws: XMLDecodingError.self) {
            try Self.decode(Order.self, Data(document.utf8))
        }
        #expect(error?.reason.contains("processing instruction without data") == true)
        #expect(SOAPFaultReader.read(Data(document.utf8)) == nil)
    }

    @Test("a processing instruction with data, and the XML declaration, still decode")
    func instructionWithDataDecodes() throws {
        let document = #"<?xml version="1.0"?><?xml-stylesheet href="a.xsl"?><Order><?keep me?><id>7</id></Order>"#
        #expect(try Self.decode(Order.self, Data(document.utf8)).id == 7)
    }

    @Test(
        "a declaration libxml2 would read differently from Courier is refused",
        arguments: [[UInt8]]([
            // No `?>`: libxml2 still reads the encoding (it crashed in xmlSwitchToEncoding).
            Array(#"<?xml version="1.0" encoding="UTF-7"?"#.utf8) + [0] + Array("<B<?".utf8),
            // An unterminated value.
            Array(#"<?xml version="1.0" encoding="UTF-7><r/>"#.utf8),
            // After a UTF-8 byte order mark.
            [0xEF, 0xBB, 0xBF] + Array(#"<?xml version="1.0" encoding="UTF-7"?><r/>"#.utf8),
            // UTF-16 without a byte order mark: NULs, which XML does not allow in UTF-8.
            Array(#"<?xml version="1.0" encoding="UTF-7"?><r/>"#.utf8).flatMap { byte -> [UInt8] in [byte, 0] },
            // UTF-16 declared without a byte order mark.
            Array(#"<?xml version="1.0" encoding="UTF-16"?><r/>"#.utf8),
            // A UTF-16 byte order mark, then a lone high surrogate (libxml2 dereferenced null).
            [0xFE, 0xFF, 0xDA, 0x00, 0xFF, 0x3C],
            // A UTF-16 byte order mark and an odd number of bytes.
            [0xFF, 0xFE, 0x3C, 0x00, 0x72],
        ]))
    func misleadingDeclarationRefused(bytes: [UInt8]) {
        #expect(throws: XMLDecodingError.self) { try Self.decode(Order.self, Data(bytes)) }
        #expect(SOAPFaultReader.read(Data(bytes)) == nil)
    }

    @Test("UTF-16 with a byte order mark, either order, still decodes", arguments: [false, true])
    func utf16Decodes(bigEndian: Bool) throws {
        let text = #"<?xml version="1.0" encoding="UTF-16"?><Order><id>7</id><n>caf\#u{E9} \#u{1F600}</n></Order>"#
        let units = Array(text.utf16).flatMap { bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let bytes = (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) + units
        struct Named: Decodable {
            var id: Int
            var n: String
        }
        let decoded = try Self.decode(Named.self, Data(bytes))
        #expect(decoded.id == 7)
        #expect(decoded.n == "caf\u{E9} \u{1F600}")
    }
}
