import Foundation

/// How the core reaches the `CourierXML` product without depending on it.
///
/// The core stays free of XML, yet ``ResponseDecoder/automatic`` must decode an XML response when
/// the program links `CourierXML`. Swift has no load-time registration, so the core looks the
/// product's decoder type up by name in the Swift runtime's type metadata, once per process: the
/// type is found exactly when the product is linked into the program, with no call to make at
/// start-up.
package protocol AutomaticXMLDecoding: Sendable {
    /// Decodes an XML body into `type`, with the product's default limits and options.
    /// - Throws: An error naming the element path when the body is not XML or does not match.
    static func decodeXML<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value
}

/// The linked `CourierXML` decoder, if any.
enum XMLDecodingHook {
    /// The mangled name of `CourierXML.XMLAutomaticDecoding` (an enum: `O`). The runtime resolves
    /// the dotted form `Module.Name` for classes only, so the mangled form is used; a test in
    /// `CourierXMLTests` fails if the type is renamed without this.
    static let typeName = "10CourierXML20XMLAutomaticDecodingO"

    /// Looked up once; `nil` when `CourierXML` is not linked.
    static let decoder: (any AutomaticXMLDecoding.Type)? = _typeByName(typeName) as? any AutomaticXMLDecoding.Type
}
