#if XML
    import Courier
    import Dispatch
    import HTTPTypes

    /// A SOAP operation as an API object: `BaseAPI` with an envelope around a typed input and the
    /// typed result element as its output.
    ///
    /// Subclass it and give the service's path and the namespace; the operation's name defaults to
    /// the input type's name and the action to namespace + name:
    ///
    /// ```swift
    /// final class AddNumbers: SOAPAPI<Add, AddResponse>, @unchecked Sendable {
    ///     override var path: String { "calculator.asmx" }
    ///     override var namespace: String { "http://tempuri.org/" }
    /// }
    /// let sum = try await AddNumbers(client: client, input: Add(intA: 2, intB: 3)).response().AddResult
    /// ```
    ///
    /// A `Fault` fails the call with `NetworkError.Kind.soapFault` and the fault in
    /// ``Courier/NetworkError/soapFault``. It is single use, like every API object.
    open class SOAPAPI<Input: Encodable & Sendable, Output: Decodable & Sendable>: BaseAPI<Output>, @unchecked Sendable {
        // @unchecked Sendable: adds one `let` of a Sendable type to BaseAPI, whose own state is locked.

        /// The operation's input.
        public let input: Input

        /// Creates the call.
        /// - Parameters:
        ///   - client: The client that runs it.
        ///   - input: The operation's input.
        ///   - completionQueue: Where the completion handler runs; `DispatchQueue.global()` by default.
        public init(client: NetworkClient, input: Input, completionQueue: DispatchQueue = .global()) {
            self.input = input
            super.init(client: client, completionQueue: completionQueue)
        }

        /// The operation's element name; the input type's name by default.
        open var operationName: String { String(describing: Input.self) }
        /// The operation's namespace; none by default (most services need one).
        open var namespace: String { "" }
        /// The action; namespace + operation name by default.
        open var soapAction: String { SOAPRequest<Input>.defaultAction(operation: operationName, namespace: namespace) }
        /// The SOAP version; 1.1 by default.
        open var soapVersion: SOAPVersion { .v1_1 }
        /// Header entries for the envelope; none by default.
        open var soapHeaders: [SOAPHeader] { [] }

        /// The call this object describes.
        public var soapRequest: SOAPRequest<Input> {
            SOAPRequest(
                operation: operationName, namespace: namespace, action: soapAction, version: soapVersion, headers: soapHeaders,
                input: input)
        }

        /// `POST`.
        open override var method: HTTPRequest.Method { .post }
        /// The envelope.
        open override var body: RequestBody? { soapRequest.body() }
        /// `SOAPAction` for 1.1; none for 1.2. Override starting from `soapRequest.httpHeaders` to add your own.
        open override var headers: RequestHeaders { soapRequest.httpHeaders }
        /// 2xx, and 400 and 500 for faults.
        open override var statusValidation: StatusValidation { .soap }
        /// The body's first element, or a fault.
        open override var decoder: ResponseDecoder<Output> { .soap() }
    }
#endif
