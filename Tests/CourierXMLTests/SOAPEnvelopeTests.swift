import Courier
import CourierMock
import CourierXML
import Foundation
import HTTPTypes
import Logging
import Testing
import XMLCoder

@Suite("SOAP requests: envelopes, actions and content types")
struct SOAPEnvelopeTests {
    static let okResponse =
        #"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><AddResponse xmlns="http://tempuri.org/"><AddResult>5</AddResult></AddResponse></soap:Body></soap:Envelope>"#

    /// Runs `operation` over a mock that answers `okResponse`, and returns what was sent.
    func sent(_ operation: AddNumbers) async throws -> MockTransport.RecordedRequest {
        let (client, mock) = try mockSOAP()
        #expect(try await client.send(operation).AddResult == 5)
        return try #require(mock.recordedRequests.first)
    }

    func mockSOAP() throws -> (NetworkClient, MockTransport) {
        let mock = MockTransport()
        mock.stub(.post, "/calculator.asmx") { _ in
            .status(200, headers: ["Content-Type": "text/xml; charset=utf-8"], body: Data(Self.okResponse.utf8))
        }
        return (try NetworkClient(configuration: ClientConfiguration(baseURL: "http://calc.test"), transport: mock), mock)
    }

    @Test("SOAP 1.1: text/xml, a quoted SOAPAction, and the envelope byte for byte")
    func soap11() async throws {
        let request = try await sent(AddNumbers(input: Add(intA: 2, intB: 3)))
        #expect(request.head.method == .post)
        #expect(request.head.headerFields[.contentType] == "text/xml; charset=utf-8")
        #expect(request.head.headerFields[HTTPField.Name("SOAPAction")!] == "\"http://tempuri.org/Add\"")
        let expected =
            #"<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">"#
            + #"<soap:Body><Add xmlns="http://tempuri.org/"><intA>2</intA><intB>3</intB></Add></soap:Body></soap:Envelope>"#
        #expect(String(decoding: try #require(request.body), as: UTF8.self) == expected)
    }

    @Test("SOAP 1.2: application/soap+xml with the action parameter, no SOAPAction header")
    func soap12() async throws {
        let request = try await sent(AddNumbers(input: Add(intA: 2, intB: 3), soapVersion: .v1_2))
        #expect(request.head.headerFields[.contentType] == #"application/soap+xml; charset=utf-8; action="http://tempuri.org/Add""#)
        #expect(request.head.headerFields[HTTPField.Name("SOAPAction")!] == nil)
        let expected =
            #"<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">"#
            + #"<soap:Body><Add xmlns="http://tempuri.org/"><intA>2</intA><intB>3</intB></Add></soap:Body></soap:Envelope>"#
        #expect(String(decoding: try #require(request.body), as: UTF8.self) == expected)
    }

    @Test("a WS-Security UsernameToken header goes into the envelope, escaped, and never into logs or descriptions")
    func usernameToken() async throws {
        let secret = "s3cr<e>t&pass"
        let header = SOAPHeader.usernameToken(username: "svc", password: secret)
        #expect(!"\(header)".contains("s3cr"))
        let (_, mock) = try mockSOAP()
        let logs = LogStore()
        var logger = Logger(label: "soap") { _ in logs.handler() }
        logger.logLevel = .trace
        var configuration = ClientConfiguration(baseURL: "http://calc.test")
        configuration.logger = logger
        let client = try NetworkClient(configuration: configuration, transport: mock)
        #expect(try await client.send(AddNumbers(input: Add(intA: 2, intB: 3), soapHeaders: [header])).AddResult == 5)
        let body = String(decoding: try #require(mock.recordedRequests.first?.body), as: UTF8.self)
        #expect(body.contains("<soap:Header><wsse:Security xmlns:wsse="))
        #expect(body.contains(#"soap:mustUnderstand="1""#))
        #expect(body.contains("<wsse:Username>svc</wsse:Username>"))
        #expect(body.contains("s3cr&lt;e&gt;t&amp;pass</wsse:Password>"))
        #expect(body.range(of: "<soap:Header>")!.lowerBound < body.range(of: "<soap:Body>")!.lowerBound)
        #expect(!logs.text.isEmpty)
        #expect(!logs.text.contains("s3cr"))
    }

    @Test("an input that encodes as a single value fails as invalid_request before anything is sent")
    func singleValueInput() async throws {
        struct Raw: SOAPOperation {
            typealias Output = AddResponse
            var input: String { "just text" }
            var path: String { "calculator.asmx" }
            var namespace: String { "" }
        }
        let (client, mock) = try mockSOAP()
        let error = try await #require(throws: NetworkError.self) { try await client.send(Raw()) }
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains("single value"))
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("the action defaults to namespace + operation, and can be set")
    func actions() {
        #expect(SOAPRequest<Add>.defaultAction(operation: "Add", namespace: "http://tempuri.org/") == "http://tempuri.org/Add")
        #expect(SOAPRequest<Add>.defaultAction(operation: "Add", namespace: "urn:calc") == "urn:calc/Add")
        #expect(SOAPRequest<Add>.defaultAction(operation: "Add", namespace: "") == "Add")
        let custom = SOAPRequest(operation: "Add", namespace: "urn:calc", action: "urn:calc#Add", input: Add(intA: 1, intB: 2))
        #expect(custom.httpHeaders["SOAPAction"] == "\"urn:calc#Add\"")
    }

    @Test("RequestBody.xml writes a declaration, the root element, its namespace and attributes")
    func plainXMLBody() async throws {
        struct Booking: Encodable, Sendable {
            let hotel: Int
            let guest: String
        }
        let body = RequestBody.xml(Booking(hotel: 7, guest: "Ada & Bo"), rootElement: "booking", namespace: "urn:b")
        #expect(body.contentType == "application/xml; charset=utf-8")
        let text = String(decoding: try #require(body.bufferedData), as: UTF8.self)
        #expect(
            text == #"<?xml version="1.0" encoding="UTF-8"?><booking xmlns="urn:b"><hotel>7</hotel><guest>Ada &amp; Bo</guest></booking>"#)
        #expect(RequestBody.xml(42).length == nil)

        struct Tagged: Encodable, Sendable {
            @Attribute var hotel: Int
            let guest: String
        }
        let tagged = RequestBody.xml(Tagged(hotel: 7, guest: "Ada"), rootElement: "booking")
        #expect(
            String(decoding: try #require(tagged.bufferedData), as: UTF8.self)
                == #"<?xml version="1.0" encoding="UTF-8"?><booking hotel="7"><guest>Ada</guest></booking>"#)
    }
}

/// Collects every log line's message and metadata as text.
final class LogStore: @unchecked Sendable {
    // @unchecked: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    var text: String { lock.withLock { lines.joined(separator: "\n") } }

    func handler() -> some LogHandler { Handler(store: self) }

    fileprivate func append(_ line: String) { lock.withLock { lines.append(line) } }

    private struct Handler: LogHandler {
        let store: LogStore
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            store.append("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
        }
    }
}
