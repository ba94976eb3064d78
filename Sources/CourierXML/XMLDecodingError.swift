#if XML
    import Foundation

    /// Why an XML body could not be decoded, and where: the underlying error of a
    /// `NetworkError.Kind.decoding` failure from `CourierXML`.
    ///
    /// ```swift
    /// catch let error as NetworkError where error.kind == .decoding {
    ///     if let xml = error.underlying as? XMLDecodingError { print(xml.path) }  // "/hotels/hotel[2]/price"
    /// }
    /// ```
    public struct XMLDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The element path where decoding failed, from the root element: `/hotels/hotel[2]/price`.
        /// `/` when the failure concerns the whole document (not XML, over a limit).
        public var path: String
        /// What was wrong there.
        public var reason: String

        /// Creates an error.
        /// - Parameters:
        ///   - path: The element path.
        ///   - reason: What was wrong.
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        /// `at PATH: REASON`.
        public var description: String { "at \(path): \(reason)" }
    }

    extension XMLDecodingError {
        /// Translates what Courier's XML decoder threw (a `DecodingError`, or the parser's error) into a
        /// path and a reason.
        /// - Parameters:
        ///   - error: What the decoder threw.
        ///   - root: The root element's name, which coding paths leave out.
        init(_ error: any Error, root: String?) {
            guard let decoding = error as? DecodingError else {
                self.init(path: "/", reason: "the body is not well-formed XML: \(Self.parserMessage(error))")
                return
            }
            func path(_ keys: [any CodingKey]) -> String {
                var text = root.map { "/" + Self.localName($0) } ?? ""
                for key in keys {
                    if let index = key.intValue, key.stringValue == "Index \(index)" {
                        text += "[\(index + 1)]"
                    } else if !key.stringValue.isEmpty {
                        text += "/" + key.stringValue
                    }
                }
                return text.isEmpty ? "/" : text
            }
            switch decoding {
            case .typeMismatch(let type, let context):
                self.init(path: path(context.codingPath), reason: "expected \(type): \(context.debugDescription)")
            case .valueNotFound(let type, let context):
                self.init(path: path(context.codingPath), reason: "expected \(type), found nothing: \(context.debugDescription)")
            case .keyNotFound(let key, let context):
                self.init(path: path(context.codingPath + [key]), reason: "the element or attribute is missing")
            case .dataCorrupted(let context):
                self.init(path: path(context.codingPath), reason: context.debugDescription)
            @unknown default:
                self.init(path: "/", reason: "\(decoding)")
            }
        }

        /// The name without its namespace prefix (`soap:Envelope` → `Envelope`).
        static func localName(_ qualified: String) -> String {
            guard let colon = qualified.lastIndex(of: ":") else { return qualified }
            return String(qualified[qualified.index(after: colon)...])
        }

        /// FoundationXML reports libxml2's errors as `NSXMLParserErrorDomain` codes without text.
        private static func parserMessage(_ error: any Error) -> String {
            let ns = error as NSError
            guard ns.domain == "NSXMLParserErrorDomain" else { return "\(error)" }
            return "parser error \(ns.code)"
        }
    }
#endif
