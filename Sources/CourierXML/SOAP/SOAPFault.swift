#if XML
    import Courier

    /// A SOAP `Fault`: the service's refusal, in SOAP 1.1 or 1.2 terms.
    ///
    /// A call that receives one fails with `NetworkError.Kind.soapFault`, never with a decoding
    /// error; the fault is in the error:
    ///
    /// ```swift
    /// do {
    ///     let result = try await client.send(Divide(intA: 1, intB: 0))
    /// } catch let error as NetworkError where error.kind == .soapFault {
    ///     let fault = error.soapFault        // code "soap:Server", reason "Server was unable…"
    /// }
    /// ```
    public struct SOAPFault: Sendable, Hashable, CustomStringConvertible {
        /// The envelope's version.
        public var version: SOAPVersion
        /// The fault code as written: 1.1's `faultcode` (`soap:Server`, `soap:Client`), 1.2's
        /// `Code/Value` (`env:Sender`, `env:Receiver`).
        public var code: String
        /// SOAP 1.2's `Subcode/Value` chain, outermost first; empty for 1.1.
        public var subcodes: [String]
        /// The human-readable reason: 1.1's `faultstring`, 1.2's first `Reason/Text`.
        public var reason: String
        /// Who caused the fault: 1.1's `faultactor`, 1.2's `Role`; `nil` when absent.
        public var actor: String?
        /// SOAP 1.2's `Node`; `nil` when absent (always for 1.1).
        public var node: String?
        /// The `detail` (1.1) or `Detail` (1.2) element's contents as XML, `nil` when absent.
        public var detail: String?

        /// Creates a fault.
        /// - Parameters:
        ///   - version: The envelope's version.
        ///   - code: The fault code.
        ///   - subcodes: SOAP 1.2 subcodes.
        ///   - reason: The reason text.
        ///   - actor: The faultactor or role.
        ///   - node: The SOAP 1.2 node.
        ///   - detail: The detail's contents as XML.
        public init(
            version: SOAPVersion, code: String, subcodes: [String] = [], reason: String, actor: String? = nil, node: String? = nil,
            detail: String? = nil
        ) {
            self.version = version
            self.code = code
            self.subcodes = subcodes
            self.reason = reason
            self.actor = actor
            self.node = node
            self.detail = detail
        }

        /// `CODE: REASON`.
        public var description: String { "\(code): \(reason)" }
    }

    extension NetworkError {
        /// The SOAP fault of a `NetworkError.Kind.soapFault` error; `nil` for every other error.
        public var soapFault: SOAPFault? { errorBody(as: SOAPFault.self) }
    }
#endif
