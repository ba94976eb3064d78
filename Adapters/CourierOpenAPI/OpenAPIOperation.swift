#if OpenAPI
    import Courier
    import Foundation
    import HTTPTypes

    /// One generated-client operation as a Courier `Endpoint`: the runtime's request
    /// (method, encoded path and query, headers) against its server URL, named by its `operationID`.
    ///
    /// Every status is accepted (the generated client decides which are documented); the decoder is not
    /// used, since the operation runs as a stream (`NetworkClient.stream(_:)`).
    struct OpenAPIOperation: Endpoint {
        typealias Output = Data

        let baseURL: String?
        let path: String
        let method: HTTPRequest.Method
        let query: [QueryItem]
        let headers: RequestHeaders
        let body: RequestBody?
        let team: String?
        let endpointName: String?
        var statusValidation: StatusValidation { .any }

        /// - Throws: `NetworkError.Kind.invalidRequest` when the request has no path.
        init(request: HTTPRequest, body: RequestBody?, baseURL: URL, operationID: String, team: String?) throws(NetworkError) {
            guard let target = request.path, target.hasPrefix("/") else {
                throw .invalidRequest("the generated client's request for \(operationID) has no path")
            }
            let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            self.baseURL = baseURL.absoluteString
            self.path = String(parts[0])
            self.query = parts.count == 2 ? Self.queryItems(parts[1]) : []
            self.method = request.method
            // The runtime writes `Content-Length` from the body's length; Courier computes framing
            // itself and refuses a caller's (see the Courier guarantees), so the runtime's is dropped
            // once it agrees with the body, and refused when it does not.
            if let announced = request.headerFields[.contentLength] {
                guard let value = Int64(announced), value == body?.length else {
                    throw .invalidRequest(
                        "the generated client's Content-Length \(announced.prefix(20)) for \(operationID) is not its body's length")
                }
            }
            self.headers = RequestHeaders(request.headerFields.filter { $0.name != .contentLength }.map { ($0.name.rawName, $0.value) })
            self.body = body
            self.team = team
            self.endpointName = operationID
        }

        /// The runtime's query, already percent-encoded: values are kept as they are (Courier checks
        /// them), names are decoded so that Courier encodes them once.
        static func queryItems(_ query: Substring) -> [QueryItem] {
            query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                guard parts.count == 2 else { return QueryItem(name, nil) }
                return QueryItem(name: name, percentEncodedValue: String(parts[1]))
            }
        }
    }
#endif
