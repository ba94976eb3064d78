import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A stand-in for the public Calculator SOAP sample service (`http://www.dneonline.com/calculator.asmx`,
/// namespace `http://tempuri.org/`), served at `/calculator.asmx`.
///
/// It checks a request as that ASP.NET service does: the method, the content type of the SOAP
/// version (`text/xml; charset=utf-8` with a `SOAPAction` header naming the operation for 1.1;
/// `application/soap+xml; charset=utf-8` with a matching `action` parameter, if any, for 1.2), an
/// envelope of that version whose body holds one of `Add`, `Subtract`, `Multiply` or `Divide` in the
/// service's namespace with integer `intA` and `intB`. It answers `<OpResponse><OpResult>` in the
/// same version, or a fault: the client's for a bad request, the server's (status 500) for a
/// division by zero, with the text the real service sends.
public enum CalculatorService {
    /// The service's namespace.
    public static let namespace = "http://tempuri.org/"
    static let soap11 = "http://schemas.xmlsoap.org/soap/envelope/"
    static let soap12 = "http://www.w3.org/2003/05/soap-envelope"
    static let divideByZero =
        "System.Web.Services.Protocols.SoapException: Server was unable to process request. ---> System.DivideByZeroException: Attempted to divide by zero."

    /// The stand-in's answer without a server, for an in-process mock transport: the status, the
    /// headers and the body the loopback route would send.
    /// - Parameters:
    ///   - method: The request method.
    ///   - headers: The request headers.
    ///   - body: The request body.
    /// - Returns: The response.
    public static func answer(
        method: String, headers: [(String, String)], body: [UInt8]
    ) -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        guard case .respond(let status, let fields, let bytes) = respond(method: method, headers: headers, body: body) else {
            return (500, [], [])
        }
        return (status, fields, bytes)
    }

    static func respond(method: String, headers: [(String, String)], body: [UInt8]) -> ServerAction {
        guard method == "POST" else { return Route.text(405, "The request method \(method) is not allowed; use POST.") }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        let contentType = header("Content-Type") ?? ""
        let parameters = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let mediaType = parameters.first?.lowercased() ?? ""
        let isUTF8 = parameters.dropFirst().contains { $0.lowercased() == "charset=utf-8" }
        let version: Version
        switch mediaType {
        case "text/xml" where isUTF8: version = .v11
        case "application/soap+xml" where isUTF8: version = .v12
        default:
            return Route.text(
                415,
                "Cannot process the message because the content type '\(contentType)' was not the expected type 'text/xml; charset=utf-8'.")
        }
        let parsed = EnvelopeParser.parse(body)
        guard let envelope = parsed, envelope.namespace == version.namespace else {
            return fault(version, client: true, "Server did not recognize the envelope: it is not a SOAP \(version.name) envelope.")
        }
        let operation = envelope.operation
        let action = namespace + operation
        switch version {
        case .v11:
            guard header("SOAPAction") == "\"\(action)\"" else {
                return fault(
                    version, client: true, "Server did not recognize the value of HTTP Header SOAPAction: \(header("SOAPAction") ?? "").")
            }
        case .v12:
            let stated = parameters.dropFirst().first { $0.lowercased().hasPrefix("action=") }
            if let stated, stated.dropFirst("action=".count) != "\"\(action)\"" {
                return fault(version, client: true, "Server did not recognize the value of the action parameter: \(stated).")
            }
        }
        guard envelope.operationNamespace == namespace, ["Add", "Subtract", "Multiply", "Divide"].contains(operation) else {
            return fault(
                version, client: true, "Server did not recognize the operation \(operation) in namespace \(envelope.operationNamespace).")
        }
        guard let a = envelope.arguments["intA"].flatMap({ Int32($0) }), let b = envelope.arguments["intB"].flatMap({ Int32($0) }) else {
            return fault(version, client: true, "Server was unable to read request. ---> intA and intB must be integers.")
        }
        let result: Int32
        switch operation {
        case "Add": result = a &+ b
        case "Subtract": result = a &- b
        case "Multiply": result = a &* b
        default:
            guard b != 0 else { return fault(version, client: false, divideByZero) }
            result = a / b
        }
        let xml =
            "<\(operation)Response xmlns=\"\(namespace)\"><\(operation)Result>\(result)</\(operation)Result></\(operation)Response>"
        return .respond(status: 200, headers: [("Content-Type", version.responseContentType)], body: Array(version.wrap(xml).utf8))
    }

    enum Version {
        case v11, v12
        var namespace: String { self == .v11 ? soap11 : soap12 }
        var name: String { self == .v11 ? "1.1" : "1.2" }
        var responseContentType: String { self == .v11 ? "text/xml; charset=utf-8" : "application/soap+xml; charset=utf-8" }
        func wrap(_ body: String) -> String {
            let prefix = self == .v11 ? "soap" : "soap12"
            return #"<?xml version="1.0" encoding="utf-8"?>"#
                + "<\(prefix):Envelope xmlns:\(prefix)=\"\(namespace)\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\">"
                + "<\(prefix):Body>\(body)</\(prefix):Body></\(prefix):Envelope>"
        }
    }

    static func fault(_ version: Version, client: Bool, _ reason: String) -> ServerAction {
        let text = escape(reason)
        let body: String
        let status: Int
        switch version {
        case .v11:
            status = 500
            body =
                "<soap:Fault><faultcode>soap:\(client ? "Client" : "Server")</faultcode><faultstring>\(text)</faultstring><detail /></soap:Fault>"
        case .v12:
            status = client ? 400 : 500
            body =
                "<soap12:Fault><soap12:Code><soap12:Value>soap12:\(client ? "Sender" : "Receiver")</soap12:Value></soap12:Code>"
                + "<soap12:Reason><soap12:Text xml:lang=\"en\">\(text)</soap12:Text></soap12:Reason><soap12:Detail /></soap12:Fault>"
        }
        return .respond(status: status, headers: [("Content-Type", version.responseContentType)], body: Array(version.wrap(body).utf8))
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Reads what the calculator needs from a request envelope.
private final class EnvelopeParser: NSObject, XMLParserDelegate {
    struct Envelope {
        var namespace: String
        var operation: String
        var operationNamespace: String
        var arguments: [String: String]
    }

    private var path: [String] = []
    private var envelopeNamespace: String?
    private var operation: String?
    private var operationNamespace = ""
    private var arguments: [String: String] = [:]
    private var text = ""
    private var bodySeen = false

    static func parse(_ bytes: [UInt8]) -> Envelope? {
        // FoundationXML traps on names that are not valid UTF-8: refuse such a body before parsing.
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        let reader = EnvelopeParser()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        guard parser.parse(), let namespace = reader.envelopeNamespace, let operation = reader.operation, reader.bodySeen else {
            return nil
        }
        return Envelope(
            namespace: namespace, operation: operation, operationNamespace: reader.operationNamespace, arguments: reader.arguments)
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        if path.isEmpty {
            if elementName == "Envelope" { envelopeNamespace = namespaceURI ?? "" } else { parser.abortParsing() }
        } else if path.count == 1, elementName == "Body", namespaceURI == envelopeNamespace {
            bodySeen = true
        } else if path.count == 2, path[1] == "Body", operation == nil {
            operation = elementName
            operationNamespace = namespaceURI ?? ""
        }
        path.append(elementName)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if path.count == 4, path[1] == "Body", namespaceURI == operationNamespace { arguments[elementName] = text }
        path.removeLast()
        text = ""
    }
}
