#if XML
    import Courier
    import HTTPTypes

    /// A SOAP operation described as a value: an `Endpoint` whose body is an envelope around a typed
    /// input and whose output is the typed result element.
    ///
    /// Give the service's path, the namespace and the input; the operation's name defaults to the
    /// input type's name and the action to namespace + name. Run it with `NetworkClient.send(_:)`:
    ///
    /// ```swift
    /// struct Add: Encodable, Sendable { let intA: Int; let intB: Int }
    /// struct AddResponse: Decodable, Sendable { let AddResult: Int }
    ///
    /// struct AddNumbers: SOAPOperation {
    ///     typealias Output = AddResponse
    ///     let input: Add
    ///     var path: String { "calculator.asmx" }
    ///     var namespace: String { "http://tempuri.org/" }
    /// }
    /// let sum = try await client.send(AddNumbers(input: Add(intA: 2, intB: 3))).AddResult
    /// ```
    ///
    /// A `Fault` fails the call with `NetworkError.Kind.soapFault` and the fault in
    /// ``Courier/NetworkError/soapFault``. To add HTTP headers of your own, override `headers` starting from
    /// ``soapRequest``'s `httpHeaders`, which carry the `SOAPAction`.
    public protocol SOAPOperation: Endpoint where Output: Decodable {
        /// The operation's input: the body's one element.
        associatedtype Input: Encodable & Sendable

        /// The input.
        var input: Input { get }
        /// The operation's element name; the input type's name by default.
        var operationName: String { get }
        /// The operation's namespace; required (use `""` for none).
        var namespace: String { get }
        /// The action; namespace + operation name by default (see ``SOAPRequest/defaultAction(operation:namespace:)``).
        var soapAction: String { get }
        /// The SOAP version; 1.1 by default.
        var soapVersion: SOAPVersion { get }
        /// Header entries for the envelope; none by default.
        var soapHeaders: [SOAPHeader] { get }
    }

    extension SOAPOperation {
        /// The input type's name.
        public var operationName: String { String(describing: Input.self) }
        /// Namespace + operation name.
        public var soapAction: String { SOAPRequest<Input>.defaultAction(operation: operationName, namespace: namespace) }
        /// 1.1.
        public var soapVersion: SOAPVersion { .v1_1 }
        /// None.
        public var soapHeaders: [SOAPHeader] { [] }

        /// The call this operation describes.
        public var soapRequest: SOAPRequest<Input> {
            SOAPRequest(
                operation: operationName, namespace: namespace, action: soapAction, version: soapVersion, headers: soapHeaders,
                input: input)
        }

        /// `POST`.
        public var method: HTTPRequest.Method { .post }
        /// The envelope.
        public var body: RequestBody? { soapRequest.body() }
        /// `SOAPAction` for 1.1; none for 1.2.
        public var headers: RequestHeaders { soapRequest.httpHeaders }
        /// 2xx, and 400 and 500 for faults.
        public var statusValidation: StatusValidation { .soap }
        /// The body's first element, or a fault.
        public var decoder: ResponseDecoder<Output> { .soap() }
    }
#endif
