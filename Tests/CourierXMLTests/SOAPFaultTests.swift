import Courier
import CourierXML
import Foundation
import Testing

@Suite("SOAP responses: results, faults of both versions, and what is not SOAP")
struct SOAPFaultTests {
    static let fault11 = """
        <?xml version="1.0" encoding="utf-8"?>
        <soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">
          <soap:Body>
            <soap:Fault>
              <faultcode>soap:Client</faultcode>
              <faultstring>Card &lt;declined&gt;</faultstring>
              <faultactor>urn:payments</faultactor>
              <detail><e:PaymentError xmlns:e="urn:errors" severity="high"><e:Code>51</e:Code><![CDATA[a<b]]></e:PaymentError></detail>
            </soap:Fault>
          </soap:Body>
        </soap:Envelope>
        """

    static let fault12 = """
        <env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:m="urn:timeouts">
          <env:Body>
            <env:Fault>
              <env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value>m:MessageTimeout</env:Value>
                <env:Subcode><env:Value>m:Retry</env:Value></env:Subcode></env:Subcode></env:Code>
              <env:Reason><env:Text xml:lang="en">Sender Timeout</env:Text><env:Text xml:lang="pt">Tempo esgotado</env:Text></env:Reason>
              <env:Node>urn:node</env:Node>
              <env:Role>urn:role</env:Role>
              <env:Detail><m:MaxTime>P5M</m:MaxTime></env:Detail>
            </env:Fault>
          </env:Body>
        </env:Envelope>
        """

    @Test("a SOAP 1.1 fault is a soap_fault error with code, reason, actor and the raw detail", arguments: [500, 200])
    func fault11(status: Int) async throws {
        let error = try #require(
            try await decodingError(Self.fault11, as: ResponseDecoder<AddResponse>.soap(), contentType: "text/xml", status: status))
        #expect(error.kind == .soapFault)
        #expect(error.status == status)
        let fault = try #require(error.soapFault)
        #expect(fault.version == .v1_1)
        #expect(fault.code == "soap:Client")
        #expect(fault.reason == "Card <declined>")
        #expect(fault.actor == "urn:payments")
        #expect(fault.subcodes.isEmpty)
        #expect(
            fault.detail
                == #"<e:PaymentError xmlns:e="urn:errors" severity="high"><e:Code>51</e:Code>a&lt;b</e:PaymentError>"#)
        #expect(error.message.contains("soap:Client: Card <declined>"))
    }

    @Test("a SOAP 1.2 fault carries the code, the subcodes, the first reason, node, role and detail", arguments: [400, 500])
    func fault12(status: Int) async throws {
        let error = try #require(
            try await decodingError(
                Self.fault12, as: ResponseDecoder<AddResponse>.soap(), contentType: "application/soap+xml", status: status))
        #expect(error.kind == .soapFault)
        let fault = try #require(error.soapFault)
        #expect(fault.version == .v1_2)
        #expect(fault.code == "env:Sender")
        #expect(fault.subcodes == ["m:MessageTimeout", "m:Retry"])
        #expect(fault.reason == "Sender Timeout")
        #expect(fault.node == "urn:node")
        #expect(fault.actor == "urn:role")
        #expect(fault.detail == #"<m:MaxTime>P5M</m:MaxTime>"#)
    }

    @Test(
        "a 400 or 500 that is not a SOAP fault fails as http_status, never as a decoding error",
        arguments: [
            (500, "<html><body>Internal error</body></html>"),
            (500, "not xml"),
            (
                400,
                #"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><AddResponse><AddResult>1</AddResult></AddResponse></soap:Body></soap:Envelope>"#
            ),
            (500, ""),
        ])
    func notAFault(status: Int, body: String) async throws {
        let error = try #require(
            try await decodingError(body, as: ResponseDecoder<AddResponse>.soap(), contentType: "text/html", status: status))
        #expect(error.kind == .httpStatus)
        #expect(error.status == status)
        #expect(error.soapFault == nil)
    }

    @Test("a SOAP call outside 2xx, 400 and 500 fails as http_status before decoding")
    func otherStatus() async throws {
        let (client, _) = try mockClient(body: Self.fault11, contentType: "text/xml", status: 503)
        struct Op: SOAPOperation {
            typealias Output = AddResponse
            var input: Add { Add(intA: 1, intB: 1) }
            var path: String { "doc" }
            var namespace: String { "http://tempuri.org/" }
        }
        let error = try await #require(throws: NetworkError.self) { try await client.send(Op()) }
        #expect(error.kind == .httpStatus)
        #expect(error.status == 503)
    }

    @Test(
        "a 2xx that is not a matching envelope fails as a decoding error naming the path",
        arguments: [
            ("<notsoap><x/></notsoap>", "/notsoap"),
            (#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>"#, "/Envelope/Body"),
            (
                #"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><AddResponse xmlns="http://tempuri.org/"><AddResult>x</AddResult></AddResponse></s:Body></s:Envelope>"#,
                "/Envelope/Body/AddResponse/AddResult"
            ),
            ("{}", "/"),
        ])
    func badResult(body: String, path: String) async throws {
        let error = try #require(try await decodingError(body, as: ResponseDecoder<AddResponse>.soap(), contentType: "text/xml"))
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.path == path, "\(error)")
    }

    @Test("a result decodes from the body's first element, whatever its prefix and with a Header present")
    func result() async throws {
        let body = """
            <S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Header><t:Trace xmlns:t="urn:t">1</t:Trace></S:Header>
            <S:Body><r:AddResponse xmlns:r="http://tempuri.org/"><r:AddResult>42</r:AddResult></r:AddResponse></S:Body></S:Envelope>
            """
        #expect(try await decode(body, as: ResponseDecoder<AddResponse>.soap(), contentType: "text/xml").AddResult == 42)
    }

    @Test("a DTD in a SOAP response is refused")
    func dtdInSOAP() async throws {
        let body =
            "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
            + Self.fault11.replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"utf-8\"?>", with: "")
        let error = try #require(try await decodingError(body, as: ResponseDecoder<AddResponse>.soap(), contentType: "text/xml"))
        #expect(error.kind == .decoding)
        #expect((error.underlying as? XMLDecodingError)?.reason.contains("DTD") == true)
    }
}
