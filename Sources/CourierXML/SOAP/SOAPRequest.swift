#if XML
    import Courier
    import Foundation
    import XMLCoder

    /// One SOAP operation call, described once: what ``SOAPOperation`` and ``SOAPAPI`` both turn into
    /// a request body, HTTP headers, a status check and a response decoder.
    ///
    /// Use it directly to build a custom API object; the two types above are the usual way.
    public struct SOAPRequest<Input: Encodable & Sendable>: Sendable {
        /// The operation's element name, for example `Add`.
        public var operation: String
        /// The namespace of the operation's element, for example `http://tempuri.org/`.
        public var namespace: String
        /// The action URI (1.1's `SOAPAction`, 1.2's `action` parameter).
        public var action: String
        /// The SOAP version.
        public var version: SOAPVersion
        /// The envelope's header entries.
        public var headers: [SOAPHeader]
        /// The operation's input, encoded as the body's one element.
        public var input: Input

        /// Describes a call.
        /// - Parameters:
        ///   - operation: The operation's element name.
        ///   - namespace: Its namespace; empty for none.
        ///   - action: The action; ``defaultAction(operation:namespace:)`` when `nil`.
        ///   - version: The SOAP version; 1.1 by default.
        ///   - headers: Header entries; none by default.
        ///   - input: The input.
        public init(
            operation: String, namespace: String, action: String? = nil, version: SOAPVersion = .v1_1, headers: [SOAPHeader] = [],
            input: Input
        ) {
            self.operation = operation
            self.namespace = namespace
            self.action = action ?? Self.defaultAction(operation: operation, namespace: namespace)
            self.version = version
            self.headers = headers
            self.input = input
        }

        /// The action most services use: the namespace, a `/` if it does not end with one, and the
        /// operation (`http://tempuri.org/` and `Add` give `http://tempuri.org/Add`).
        /// - Parameters:
        ///   - operation: The operation's name.
        ///   - namespace: Its namespace.
        /// - Returns: The action URI.
        public static func defaultAction(operation: String, namespace: String) -> String {
            guard !namespace.isEmpty else { return operation }
            return namespace.hasSuffix("/") ? namespace + operation : namespace + "/" + operation
        }

        /// The envelope as the request body, with the version's content type. An input that cannot be
        /// encoded fails the call with `NetworkError.Kind.invalidRequest` before anything is sent.
        /// - Parameter encoder: The encoder for the input; ``XMLCoding/makeEncoder()`` by default.
        /// - Returns: The body.
        public func body(encoder: XMLEncoder = XMLCoding.makeEncoder()) -> RequestBody {
            .encoded(contentType: version.contentType(action: action), format: "SOAP envelope") {
                try envelope(encoder: encoder)
            }
        }

        /// The HTTP headers the version needs: `SOAPAction: "…"` for 1.1, none for 1.2 (its action is in
        /// the content type).
        public var httpHeaders: RequestHeaders {
            switch version {
            case .v1_1: ["SOAPAction": "\"\(action)\""]
            case .v1_2: [:]
            }
        }

        /// The envelope's bytes.
        /// - Throws: `EncodingError` when the input cannot be encoded.
        func envelope(encoder: XMLEncoder) throws -> Data {
            let operationElement = try XMLElementWriter.element(
                input, name: operation, namespace: namespace.isEmpty ? nil : namespace, encoder: encoder)
            var xml = Data(#"<?xml version="1.0" encoding="utf-8"?>"#.utf8)
            xml += Data("<soap:Envelope xmlns:soap=\"\(XMLEscaping.attribute(version.envelopeNamespace))\">".utf8)
            if !headers.isEmpty {
                xml += Data(("<soap:Header>" + headers.map(\.xml).joined() + "</soap:Header>").utf8)
            }
            xml += Data("<soap:Body>".utf8)
            xml += operationElement
            xml += Data("</soap:Body></soap:Envelope>".utf8)
            return xml
        }
    }

    extension StatusValidation {
        /// The statuses a SOAP response may carry: 2xx for results, 400 and 500 for faults (SOAP 1.2
        /// answers `Sender` faults with 400, everything else with 500). A 400 or 500 without a fault
        /// still fails with `NetworkError.Kind.httpStatus`.
        public static let soap = StatusValidation { (200..<300).contains($0) || $0 == 400 || $0 == 500 }
    }
#endif
