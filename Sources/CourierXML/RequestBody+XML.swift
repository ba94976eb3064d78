#if XML
    import Courier
    import Foundation
    import XMLCoder

    extension RequestBody {
        /// XML from an `Encodable` value, with `Content-Type: application/xml; charset=utf-8`.
        ///
        /// ```swift
        /// struct Booking: Encodable { @Attribute var hotel: Int; let guest: String }
        /// override var body: RequestBody? { .xml(Booking(hotel: 7, guest: "Ada"), rootElement: "booking") }
        /// // <?xml version="1.0" encoding="UTF-8"?><booking hotel="7"><guest>Ada</guest></booking>
        /// ```
        ///
        /// - Parameters:
        ///   - value: The value; it must encode as a keyed or unkeyed container (a struct, a class, an
        ///     array). A single value at the top (a `String`, a raw-value enum) has no element to live
        ///     in and fails the call with `NetworkError.Kind.invalidRequest`.
        ///   - rootElement: The root element's name; the value's type name by default.
        ///   - namespace: The default namespace (`xmlns`) of the root element; none by default.
        ///   - encoder: The encoder; ``XMLCoding/makeEncoder()`` by default.
        /// - Returns: The body; if encoding fails, the call fails with `NetworkError.Kind.invalidRequest`
        ///   before anything is sent.
        public static func xml<Value: Encodable>(
            _ value: Value, rootElement: String? = nil, namespace: String? = nil, encoder: XMLEncoder = XMLCoding.makeEncoder()
        ) -> RequestBody {
            .encoded(contentType: "application/xml; charset=utf-8", format: "XML") {
                let element = try XMLElementWriter.element(
                    value, name: rootElement ?? "\(Value.self)", namespace: namespace, encoder: encoder)
                return Data(#"<?xml version="1.0" encoding="UTF-8"?>"#.utf8) + element
            }
        }
    }

    /// Encodes one value as one element, guarding XMLCoder's trap on a top-level single value.
    enum XMLElementWriter {
        /// The element's bytes, without an XML declaration.
        /// - Throws: `EncodingError` when the value cannot be encoded, or is a single value.
        static func element<Value: Encodable>(
            _ value: Value, name: String, namespace: String?, encoder: XMLEncoder
        ) throws -> Data {
            guard TopLevelShape.of(value) != .singleValue else {
                throw EncodingError.invalidValue(
                    value,
                    EncodingError.Context(
                        codingPath: [],
                        debugDescription: "\(Value.self) encodes as a single value; XML needs a struct, class or array at the top"))
            }
            return try encoder.encode(value, withRootKey: name, rootAttributes: namespace.map { ["xmlns": $0] }, header: nil)
        }
    }
#endif
