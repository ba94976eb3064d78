#if XML
    import Courier
    import Foundation
    import HTTPTypes
    import XMLCoder

    extension ResponseDecoder where Output: Decodable {
        /// Decodes a SOAP response: the first element of the envelope's `Body` into `Output`, a `Fault`
        /// into `NetworkError.Kind.soapFault`.
        ///
        /// Pair it with ``Courier/StatusValidation/soap`` so that faults sent with 400 or 500 reach it;
        /// ``SOAPOperation`` and ``SOAPAPI`` do both. A 400 or 500 whose body is not a SOAP fault fails
        /// with `NetworkError.Kind.httpStatus`; a 2xx whose body is not a SOAP envelope, or whose
        /// element does not match `Output`, fails with `NetworkError.Kind.decoding` and an
        /// ``XMLDecodingError`` naming the element path (`/Envelope/Body/AddResponse/AddResult`).
        ///
        /// - Parameters:
        ///   - decoder: The decoder for the result element; ``XMLCoding/makeDecoder()`` by default.
        ///     Namespace processing is what lets `soap:Body` match `Body`: keep it on.
        ///   - limits: The size and depth limits; ``XMLLimits/default`` by default.
        /// - Returns: The response decoder.
        public static func soap(_ decoder: XMLDecoder = XMLCoding.makeDecoder(), limits: XMLLimits = .default) -> ResponseDecoder {
            let options = XMLTreeDecoding.Options(decoder)
            return ResponseDecoder { data, head in
                try SOAPResponseReading.decode(Output.self, from: data, head: head, options: options, limits: limits)
            }
        }
    }

    /// What the decoder returned by ``Courier/ResponseDecoder/soap(_:limits:)`` does.
    enum SOAPResponseReading {
        static func decode<Output: Decodable>(
            _ type: Output.Type, from data: Data, head: HTTPResponse, options: XMLTreeDecoding.Options, limits: XMLLimits
        ) throws -> Output {
            let isSuccess = (200..<300).contains(head.status.code)
            let envelope: SOAPEnvelope<Output>
            do {
                envelope = try XMLCoding.decode(
                    SOAPEnvelope<Output>.self, from: data, options: options, limits: limits, rootElement: "Envelope")
            } catch {
                // Not a SOAP answer: a rejected status says more than the body does.
                if !isSuccess { throw statusError(head) }
                throw error
            }
            switch envelope.body {
            case .result(let value):
                guard isSuccess else { throw statusError(head) }
                return value
            case .fault:
                let fault =
                    SOAPFaultReader.read(data, limits: limits)
                    ?? SOAPFault(version: .v1_1, code: "", reason: "the service sent a Fault that could not be read")
                var error = NetworkError(
                    kind: .soapFault, phase: .validating, message: "the service answered with a SOAP fault: \(fault)",
                    status: head.status.code)
                error.decodedErrorBody = fault
                throw error
            }
        }

        private static func statusError(_ head: HTTPResponse) -> NetworkError {
            NetworkError(
                kind: .httpStatus, phase: .validating,
                message: "the server answered \(head.status.code) \(head.status.reasonPhrase) without a SOAP fault",
                status: head.status.code)
        }
    }

    /// `Envelope` → `Body` → the first element, or a `Fault`.
    struct SOAPEnvelope<Output: Decodable>: Decodable {
        let body: SOAPBody<Output>

        enum CodingKeys: String, CodingKey {
            case body = "Body"
        }
    }

    /// The `Body`'s first element: the result, or a fault (read separately, with its raw detail).
    enum SOAPBody<Output: Decodable>: Decodable {
        case result(Output)
        case fault

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyElementKey.self)
            guard let first = container.allKeys.first else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(codingPath: container.codingPath, debugDescription: "the SOAP Body is empty"))
            }
            if first.stringValue == "Fault" {
                self = .fault
            } else {
                self = .result(try container.decode(Output.self, forKey: first))
            }
        }
    }

    /// Any element name.
    struct AnyElementKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
#endif
