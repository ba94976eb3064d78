import Courier
import CourierConformance
import CourierCurl
import CourierMock
import CourierTestServer
import CourierURLSession
import CourierXML
import Foundation
import HTTPTypes
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// The Calculator example's calls against the loopback stand-in, over every transport that does I/O.
@Suite("SOAP and XML over every transport", .timeLimit(.minutes(2)))
struct CalculatorOverTransportsTests {
    static var transports: [String] {
        #if AsyncHTTPClient
            ["curl", "urlsession", "ahc"]
        #else
            ["curl", "urlsession"]
        #endif
    }

    static func client(_ transport: String, baseURL: String) throws -> NetworkClient {
        #if AsyncHTTPClient
            let registry = TransportRegistry([.urlSession(), .curl(), .asyncHTTPClient()])
        #else
            let registry = TransportRegistry([.urlSession(), .curl()])
        #endif
        let configuration = try ClientConfiguration.load(
            environment: ["COURIER_TRANSPORT": transport], defaults: ClientConfiguration(baseURL: baseURL))
        return try NetworkClient(configuration: configuration, registry: registry)
    }

    @Test("Add over SOAP 1.1 and 1.2, as a value and as an API object", arguments: transports)
    func add(transport: String) async throws {
        try await withServer { server in
            let client = try Self.client(transport, baseURL: server.baseURL)
            #expect(try await client.send(AddNumbers(input: Add(intA: 2, intB: 40))).AddResult == 42)
            #expect(try await client.send(AddNumbers(input: Add(intA: -5, intB: 3), soapVersion: .v1_2)).AddResult == -2)
            #expect(try await AddAPI12(client: client, input: Add(intA: 7, intB: 8)).response().AddResult == 15)
            #expect(try await DivideAPI(client: client, input: Divide(intA: 9, intB: 2)).response().DivideResult == 4)
            await client.shutdown()
        }
    }

    @Test("division by zero is a typed SOAP fault in both versions, with the service's words", arguments: transports)
    func divideByZero(transport: String) async throws {
        try await withServer { server in
            let client = try Self.client(transport, baseURL: server.baseURL)
            for version in [SOAPVersion.v1_1, .v1_2] {
                let error = try await #require(throws: NetworkError.self) {
                    try await client.send(DivideNumbers(input: Divide(intA: 1, intB: 0), soapVersion: version))
                }
                #expect(error.kind == .soapFault)
                #expect(error.status == 500)
                let fault = try #require(error.soapFault)
                #expect(fault.version == version)
                #expect(fault.code == (version == .v1_1 ? "soap:Server" : "soap12:Receiver"))
                #expect(fault.reason.contains("System.DivideByZeroException: Attempted to divide by zero."))
            }
            // The API object reports the same fault through its completion handler.
            let api = DivideAPI(client: client, input: Divide(intA: 1, intB: 0))
            let result: Result<DivideResponse, NetworkError> = await withCheckedContinuation { continuation in
                api.completion = { continuation.resume(returning: $0) }
                do {
                    try api.start()
                } catch {
                    continuation.resume(returning: .failure(NetworkError(kind: .alreadyStarted, phase: .building, message: "\(error)")))
                }
            }
            guard case .failure(let error) = result else {
                Issue.record("expected a fault")
                return
            }
            #expect(error.kind == .soapFault)
            await client.shutdown()
        }
    }

    @Test("the stand-in refuses what the real service refuses: a wrong SOAPAction is a client fault", arguments: transports)
    func wrongAction(transport: String) async throws {
        struct Misnamed: SOAPOperation {
            typealias Output = AddResponse
            var input: Add { Add(intA: 1, intB: 2) }
            var path: String { "calculator.asmx" }
            var namespace: String { "http://tempuri.org/" }
            var soapAction: String { "http://tempuri.org/Sum" }
        }
        try await withServer { server in
            let client = try Self.client(transport, baseURL: server.baseURL)
            let error = try await #require(throws: NetworkError.self) { try await client.send(Misnamed()) }
            #expect(error.kind == .soapFault)
            #expect(error.soapFault?.code == "soap:Client")
            #expect(error.soapFault?.reason.contains("SOAPAction") == true)
            await client.shutdown()
        }
    }

    /// The envelope and headers of a SOAP request, sent to the loopback echo route.
    struct EchoedSOAP: Endpoint {
        typealias Output = EchoResponse
        let request: SOAPRequest<Add>
        var path: String { "echo/soap" }
        var method: HTTPRequest.Method { .post }
        var body: RequestBody? { request.body() }
        var headers: RequestHeaders { request.httpHeaders }
    }

    @Test("the loopback server receives the SOAP 1.1 and 1.2 envelopes and headers byte for byte", arguments: transports)
    func byteForByte(transport: String) async throws {
        try await withServer { server in
            let client = try Self.client(transport, baseURL: server.baseURL)
            for version in [SOAPVersion.v1_1, .v1_2] {
                let headers = [SOAPHeader.usernameToken(username: "svc", password: "pw")]
                let request = SOAPRequest(
                    operation: "Add", namespace: "http://tempuri.org/", version: version, headers: headers, input: Add(intA: 2, intB: 3))
                let echo = try await client.send(EchoedSOAP(request: request))
                let envelope = version.envelopeNamespace
                let expected =
                    #"<?xml version="1.0" encoding="utf-8"?>"# + "<soap:Envelope xmlns:soap=\"\(envelope)\"><soap:Header>"
                    + #"<wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" soap:mustUnderstand="1">"#
                    + #"<wsse:UsernameToken><wsse:Username>svc</wsse:Username><wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText">pw</wsse:Password>"#
                    + #"</wsse:UsernameToken></wsse:Security></soap:Header><soap:Body><Add xmlns="http://tempuri.org/"><intA>2</intA><intB>3</intB></Add>"#
                    + "</soap:Body></soap:Envelope>"
                #expect(echo.method == "POST")
                #expect(echo.body == expected)
                #expect(echo.bodyLength == expected.utf8.count)
                func header(_ name: String) -> [String] { echo.headers.filter { $0[0].lowercased() == name }.map { $0[1] } }
                switch version {
                case .v1_1:
                    #expect(header("content-type") == ["text/xml; charset=utf-8"])
                    #expect(header("soapaction") == ["\"http://tempuri.org/Add\""])
                case .v1_2:
                    #expect(header("content-type") == [#"application/soap+xml; charset=utf-8; action="http://tempuri.org/Add""#])
                    #expect(header("soapaction").isEmpty)
                }
            }
            await client.shutdown()
        }
    }

    struct Catalogue: Endpoint {
        typealias Output = SampleCatalogue
        var path: String { "xml" }
        var query: [QueryItem] { [QueryItem("bytes", "20000"), QueryItem("contentType", "text/xml; charset=utf-8")] }
    }

    @Test("an XML response decodes by its content type", arguments: transports)
    func xmlByContentType(transport: String) async throws {
        try await withServer { server in
            let client = try Self.client(transport, baseURL: server.baseURL)
            let catalogue = try await client.send(Catalogue())
            #expect(catalogue.hotel.count > 50)
            #expect(catalogue.hotel[0].description == "Room 1 & breakfast <included>; \"quiet\" street.")
            #expect(catalogue.generated == "2026-11-24T08:00:00Z")
            await client.shutdown()
        }
    }

    struct Item: Decodable, Sendable, Equatable {
        let name: String
        let count: Int
    }

    struct GzippedItem: Endpoint {
        typealias Output = Item
        var path: String { "gzip-xml" }
    }

    /// Only URLSession decodes content codings today; curl and AsyncHTTPClient gain them with the
    /// chain's bridge (the issue that moves HTTP rules into the core).
    @Test("XML over gzip decodes where the transport decodes the coding")
    func gzippedXML() async throws {
        try await withServer { server in
            let client = try Self.client("urlsession", baseURL: server.baseURL)
            #expect(try await client.send(GzippedItem()) == Item(name: "pen", count: 3))
            await client.shutdown()
        }
    }
}
