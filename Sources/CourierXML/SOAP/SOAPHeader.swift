#if XML
    import Foundation
    import XMLCoder

    /// One entry of a SOAP envelope's `Header`: WS-Security's `UsernameToken`, or any element you encode.
    ///
    /// A header's contents never appear in its `description`, in logs or in errors: headers carry
    /// credentials. (Courier never logs request bodies, at any level.)
    ///
    /// ```swift
    /// var soapHeaders: [SOAPHeader] { [.usernameToken(username: "svc-booking", password: secret)] }
    /// ```
    public struct SOAPHeader: Sendable, Hashable, CustomStringConvertible {
        /// The element's name as written (for `description`).
        public let name: String
        /// The element, serialized.
        let xml: String

        private init(name: String, xml: String) {
            self.name = name
            self.xml = xml
        }

        /// A WS-Security `Security` header with a `UsernameToken` and a plain-text password
        /// (`#PasswordText`), as services behind WS-Security's username profile expect.
        ///
        /// Send it over TLS only: the password is in the envelope as written.
        /// - Parameters:
        ///   - username: The user name.
        ///   - password: The password; never logged.
        ///   - mustUnderstand: Whether the service must process the header (`mustUnderstand="1"`); `true` by default.
        /// - Returns: The header.
        public static func usernameToken(username: String, password: String, mustUnderstand: Bool = true) -> SOAPHeader {
            let wsse = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
            let passwordType =
                "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
            let xml =
                "<wsse:Security xmlns:wsse=\"\(wsse)\"\(mustUnderstand ? " soap:mustUnderstand=\"1\"" : "")>"
                + "<wsse:UsernameToken><wsse:Username>\(XMLEscaping.text(username))</wsse:Username>"
                + "<wsse:Password Type=\"\(passwordType)\">\(XMLEscaping.text(password))</wsse:Password>"
                + "</wsse:UsernameToken></wsse:Security>"
            return SOAPHeader(name: "wsse:Security", xml: xml)
        }

        /// Any `Encodable` value as a header element.
        /// - Parameters:
        ///   - value: The value; a struct, class or array (see ``Courier/RequestBody/xml(_:rootElement:namespace:encoder:)``).
        ///   - name: The element's name.
        ///   - namespace: The element's default namespace; none by default.
        ///   - encoder: The encoder; ``XMLCoding/makeEncoder()`` by default.
        /// - Returns: The header.
        /// - Throws: `EncodingError` when the value cannot be encoded.
        public static func element<Value: Encodable>(
            _ value: Value, name: String, namespace: String? = nil, encoder: XMLEncoder = XMLCoding.makeEncoder()
        ) throws -> SOAPHeader {
            let data = try XMLElementWriter.element(value, name: name, namespace: namespace, encoder: encoder)
            return SOAPHeader(name: name, xml: String(decoding: data, as: UTF8.self))
        }

        /// `SOAPHeader(NAME)`: the name only, never the contents.
        public var description: String { "SOAPHeader(\(name))" }
    }

    /// Escaping for text written into XML by hand.
    enum XMLEscaping {
        /// Text content: `&`, `<` and `>` escaped.
        static func text(_ value: String) -> String {
            var out = ""
            out.reserveCapacity(value.utf8.count)
            for character in value {
                switch character {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                default: out.append(character)
                }
            }
            return out
        }

        /// An attribute value in double quotes: also `"` escaped.
        static func attribute(_ value: String) -> String {
            text(value).replacingOccurrences(of: "\"", with: "&quot;")
        }
    }
#endif
