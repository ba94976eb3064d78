#if XML
    import Foundation
    import XMLCoder

    /// The XML decoders and encoders Courier uses when a call does not give its own.
    ///
    /// Both are XMLCoder's (CoreOffice/XMLCoder) types, set up for web services. Encoding is
    /// XMLCoder's. Decoding is Courier's own, over a compact tree built from FoundationXML's parser,
    /// which holds a few times the document's size where XMLCoder held over twenty; it follows
    /// XMLCoder's conventions and reads the `XMLDecoder`'s `keyDecodingStrategy`,
    /// `dateDecodingStrategy`, `dataDecodingStrategy`, `nonConformingFloatDecodingStrategy`,
    /// `shouldProcessNamespaces`, `trimValueWhitespaces` and `userInfo` (not its
    /// `nodeDecodingStrategy`: a key matches child elements first, then an attribute). The defaults:
    /// - the decoder processes namespaces, so `<m:Price>` decodes into a property named `Price`
    ///   whatever prefix the server chose, and it reads dates as ISO 8601 (`xs:dateTime`);
    /// - the encoder writes dates as ISO 8601 and escapes `&`, `<`, `>`, `'` and `"`.
    ///
    /// To change a strategy, start from these and pass the result to
    /// ``Courier/ResponseDecoder/xml(_:limits:)`` or ``Courier/RequestBody/xml(_:rootElement:namespace:encoder:)``:
    ///
    /// ```swift
    /// let decoder = XMLCoding.makeDecoder()
    /// decoder.keyDecodingStrategy = .convertFromSnakeCase
    /// decoder.dateDecodingStrategy = .secondsSince1970
    /// override var decoder: ResponseDecoder<Hotels> { .xml(decoder) }
    /// ```
    public enum XMLCoding {
        /// A new decoder with Courier's defaults: namespaces processed, ISO 8601 dates, values trimmed.
        /// - Returns: The decoder; configure it before handing it to a call, not after.
        public static func makeDecoder() -> XMLDecoder {
            let decoder = XMLDecoder(trimValueWhitespaces: true, removeWhitespaceElements: false)
            decoder.shouldProcessNamespaces = true
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }

        /// A new encoder with Courier's defaults: ISO 8601 dates, no pretty printing.
        /// - Returns: The encoder.
        public static func makeEncoder() -> XMLEncoder {
            let encoder = XMLEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return encoder
        }

        /// Decodes `type` from `data` after checking ``XMLLimits``, translating every failure into an
        /// ``XMLDecodingError`` that names the element path.
        /// - Parameter rootElement: The local name the root element must have (`Envelope` for SOAP);
        ///   any when `nil`.
        static func decode<Value: Decodable>(
            _ type: Value.Type, from data: Data, options: XMLTreeDecoding.Options, limits: XMLLimits, rootElement: String? = nil
        ) throws(XMLDecodingError) -> Value {
            let outline = try XMLPrescan.check(data, limits: limits)
            guard let root = outline.root else {
                throw XMLDecodingError(path: "/", reason: "the body is not XML: it has no root element")
            }
            if let rootElement, XMLDecodingError.localName(root) != rootElement {
                throw XMLDecodingError(
                    path: "/" + XMLDecodingError.localName(root), reason: "the root element is \(root), not \(rootElement)")
            }
            do {
                return try XMLTreeDecoding(options: options).decode(type, from: outline.document, expectedElements: outline.elementCount)
            } catch let error as XMLDecodingError {
                throw error
            } catch {
                throw XMLDecodingError(error, root: root)
            }
        }
    }
#endif
