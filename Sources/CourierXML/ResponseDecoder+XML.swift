#if XML
    import Courier
    import Foundation
    import XMLCoder

    extension ResponseDecoder where Output: Decodable {
        /// Decodes XML into any `Decodable` output.
        ///
        /// Use it when a service answers XML whatever its `Content-Type` says; `ResponseDecoder.automatic` already
        /// picks XML for `application/xml`, `text/xml` and `+xml` responses once `CourierXML` is linked.
        ///
        /// ```swift
        /// struct Hotel: Decodable, Sendable {
        ///     @Attribute var id: Int      // <hotel id="7">
        ///     let name: String            //   <name>Grand</name>
        /// }
        /// struct Hotels: Decodable, Sendable { let hotel: [Hotel] }
        /// struct ListHotels: Endpoint {
        ///     typealias Output = Hotels
        ///     var path: String { "hotels" }
        ///     var decoder: ResponseDecoder<Hotels> { .xml() }
        /// }
        /// ```
        ///
        /// A body that is not XML, does not match `Output`, declares a DTD, or is larger or deeper than
        /// `limits` fails the call with `NetworkError.Kind.decoding`; its
        /// `NetworkError.underlying` is an ``XMLDecodingError`` naming the element path. The decode
        /// time shows in `RequestMetrics.decode`, apart from the network time.
        ///
        /// - Parameters:
        ///   - decoder: The options; ``XMLCoding/makeDecoder()`` by default (namespaces processed,
        ///     ISO 8601 dates). They are read once, here: changing the decoder afterwards changes nothing.
        ///   - limits: The size and depth limits; ``XMLLimits/default`` by default.
        /// - Returns: The response decoder.
        public static func xml(_ decoder: XMLDecoder = XMLCoding.makeDecoder(), limits: XMLLimits = .default) -> ResponseDecoder {
            let options = XMLTreeDecoding.Options(decoder)
            return ResponseDecoder { data, _ in
                try XMLCoding.decode(Output.self, from: data, options: options, limits: limits)
            }
        }
    }

    /// The decoder `ResponseDecoder.automatic` uses for XML responses. The core finds this
    /// type by name when the program links `CourierXML`; you never call it.
    public enum XMLAutomaticDecoding: AutomaticXMLDecoding {
        private static let options = XMLTreeDecoding.Options(XMLCoding.makeDecoder())

        /// Decodes with ``XMLCoding/makeDecoder()``'s options and ``XMLLimits/default``.
        /// - Parameters:
        ///   - type: The output type.
        ///   - data: The body.
        /// - Returns: The decoded value.
        /// - Throws: ``XMLDecodingError``.
        package static func decodeXML<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
            try XMLCoding.decode(type, from: data, options: options, limits: .default)
        }
    }
#endif
