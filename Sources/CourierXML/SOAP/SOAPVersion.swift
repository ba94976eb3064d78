#if XML
    /// The SOAP version of an operation: it decides the envelope's namespace, the content type and
    /// where the action goes.
    public enum SOAPVersion: Sendable, Hashable, CustomStringConvertible {
        /// SOAP 1.1: `text/xml; charset=utf-8`, the action in a `SOAPAction` header.
        case v1_1
        /// SOAP 1.2: `application/soap+xml; charset=utf-8; action="…"`, no `SOAPAction` header.
        case v1_2

        /// The envelope's namespace.
        public var envelopeNamespace: String {
            switch self {
            case .v1_1: "http://schemas.xmlsoap.org/soap/envelope/"
            case .v1_2: "http://www.w3.org/2003/05/soap-envelope"
            }
        }

        /// The version whose envelope uses `namespace`, if any.
        /// - Parameter namespace: An envelope namespace URI.
        public init?(envelopeNamespace namespace: String) {
            switch namespace {
            case SOAPVersion.v1_1.envelopeNamespace: self = .v1_1
            case SOAPVersion.v1_2.envelopeNamespace: self = .v1_2
            default: return nil
            }
        }

        /// The request's `Content-Type` for an action.
        /// - Parameter action: The operation's action URI.
        /// - Returns: `text/xml; charset=utf-8` for 1.1; `application/soap+xml; charset=utf-8; action="…"` for 1.2.
        public func contentType(action: String) -> String {
            switch self {
            case .v1_1: "text/xml; charset=utf-8"
            case .v1_2: "application/soap+xml; charset=utf-8; action=\"\(action)\""
            }
        }

        /// `1.1` or `1.2`.
        public var description: String {
            switch self {
            case .v1_1: "1.1"
            case .v1_2: "1.2"
            }
        }
    }
#endif
