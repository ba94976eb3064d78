#if OpenAPI
    import Courier
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    /// A swift-openapi-runtime `ClientTransport` that runs every operation of a generated client
    /// through a `NetworkClient`: the configuration's transport, team headers, middleware,
    /// retry, redirects, cache, queue, deadline, limits, metrics and alerts all apply, and the
    /// operation's `operationID` is the call's endpoint name (metrics labels, log lines and
    /// `RequestContext.endpointName` for middleware and header rules).
    ///
    /// ```swift
    /// let client = try NetworkClient(configuration: configuration, registry: registry)
    /// let inventory = Client(serverURL: try Servers.Server1.url(), transport: CourierClientTransport(client: client))
    /// let item = try await inventory.getItem(path: .init(itemID: 7)).ok.body.json
    /// ```
    ///
    /// Bodies stream both ways: a request body of unknown or large size goes out as the generated
    /// client produces it (`RequestBody.stream(_:length:contentType:)`, or
    /// `RequestBody.replayableStream(length:contentType:_:)` when the `HTTPBody` can be
    /// iterated more than once, so retry and redirects may resend it), and a response body is handed
    /// to the generated client as it arrives (`NetworkClient.stream(_:)`), with backpressure
    /// down to the transport. Cancelling the task that reads it stops the transfer.
    ///
    /// Every status reaches the generated client, which decides what is documented. Failures are
    /// thrown as `NetworkError`; the runtime wraps them in its `ClientError`, whose
    /// `underlyingError` is the `NetworkError`.
    public struct CourierClientTransport: ClientTransport {
        /// The client every operation runs through.
        public let client: NetworkClient
        /// The team that owns the calls, for team header rules and metrics; none by default.
        public var team: String?
        /// Request bodies of a known length up to this many bytes are read into memory before the call
        /// (a JSON body, say), so they are sent without a streaming task; larger or unknown-length
        /// bodies stream. 64 KiB by default.
        public var bufferedBodyLimit: Int

        /// Creates the transport.
        /// - Parameters:
        ///   - client: The client the operations run through; shut it down when done.
        ///   - team: The team that owns the calls; `nil` for none.
        ///   - bufferedBodyLimit: The largest known-length request body read into memory first; 64 KiB
        ///     by default (0 streams every body).
        public init(client: NetworkClient, team: String? = nil, bufferedBodyLimit: Int = 64 * 1024) {
            self.client = client
            self.team = team
            self.bufferedBodyLimit = max(0, bufferedBodyLimit)
        }

        /// Runs one operation through the client.
        /// - Parameters:
        ///   - request: The request the generated client built; its path includes the query.
        ///   - body: The request body, if any.
        ///   - baseURL: The server URL the generated client was made with.
        ///   - operationID: The operation's id in the document: the call's endpoint name.
        /// - Returns: The response head and its body, streamed (`nil` for a response without one).
        /// - Throws: `NetworkError`.
        public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (
            HTTPResponse, HTTPBody?
        ) {
            let operation = try await OpenAPIOperation(
                request: request, body: requestBody(body), baseURL: baseURL, operationID: operationID, team: team)
            let response = try await client.stream(operation)
            let status = response.head.status.code
            guard request.method != .head, status != 204, status != 304 else { return (response.head, nil) }
            let length: HTTPBody.Length = response.body.expectedLength.map { .known($0) } ?? .unknown
            return (response.head, HTTPBody(ByteChunks(body: response.body), length: length, iterationBehavior: .single))
        }

        /// The runtime's body as Courier's: in memory when small and of known length, else a stream
        /// (replayable when the runtime's body may be iterated again).
        private func requestBody(_ body: HTTPBody?) async throws -> RequestBody? {
            guard let body else { return nil }
            let length: Int64? =
                switch body.length {
                case .known(let count): count
                case .unknown: nil
                }
            if let length, length <= Int64(bufferedBodyLimit) {
                var data = Data(capacity: Int(length))
                for try await chunk in body { data.append(contentsOf: chunk) }
                return .data(data, contentType: nil)
            }
            switch body.iterationBehavior {
            case .multiple:
                return .replayableStream(length: length, contentType: nil) { DataChunks(body: body) }
            case .single:
                return .stream(DataChunks(body: body), length: length, contentType: nil)
            }
        }
    }

    /// A runtime body's chunks as `Data`, for a Courier request body.
    struct DataChunks: AsyncSequence, Sendable {
        typealias Element = Data
        let body: HTTPBody

        struct AsyncIterator: AsyncIteratorProtocol {
            var inner: HTTPBody.AsyncIterator
            mutating func next() async throws -> Data? {
                guard let chunk = try await inner.next() else { return nil }
                return Data(chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inner: body.makeAsyncIterator()) }
    }

    /// A Courier response body's chunks as the runtime's byte chunks.
    struct ByteChunks: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>
        let body: ResponseBody

        struct AsyncIterator: AsyncIteratorProtocol {
            var inner: ResponseBody.AsyncIterator
            mutating func next() async throws -> ArraySlice<UInt8>? {
                guard let chunk = try await inner.next() else { return nil }
                return ArraySlice(chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inner: body.makeAsyncIterator()) }
    }
#endif
