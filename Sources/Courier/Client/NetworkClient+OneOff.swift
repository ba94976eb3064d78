import HTTPTypes

/// A call made by its path: what ``NetworkClient/get(_:query:headers:as:)`` and
/// ``NetworkClient/post(_:json:query:headers:as:)`` send. Every other field is the `Endpoint`
/// default, so the call passes the same chain as an API object: team headers, retry, cache,
/// queue, metrics.
struct PathCall<Output: Sendable>: Endpoint {
    var method: HTTPRequest.Method
    var path: String
    var query: [QueryItem]
    var headers: RequestHeaders
    var body: RequestBody?
}

extension NetworkClient {
    /// Sends a `GET` to a path below the base URL and decodes the answer: one line for a call that
    /// needs no API object of its own.
    ///
    /// Use it for a call made from one place. A call made from several places, or one that needs
    /// its own timeout, team, queue or decoder, reads better as an ``Endpoint`` or a ``BaseAPI``.
    ///
    /// ```swift
    /// let client = try NetworkClient(baseURL: "https://api.example.com")
    /// let user = try await client.get("users/42", as: User.self)
    /// ```
    /// - Parameters:
    ///   - path: The path below the base URL, as plain text (see ``Endpoint/path``).
    ///   - query: Query items, as plain text; none by default.
    ///   - headers: Headers; they win over the client's default headers of the same name.
    ///   - type: What the body decodes to: JSON for a `Decodable` type (XML when `CourierXML` is
    ///     linked and the answer is XML), `Data` or `String` as they came.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``.
    public func get<Output: Decodable & Sendable>(
        _ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(PathCall<Output>(method: .get, path: path, query: query, headers: headers, body: nil))
    }

    /// Sends a `POST` with a JSON body to a path below the base URL and decodes the answer.
    ///
    /// ```swift
    /// let created = try await client.post("users", json: NewUser(name: "Ada"), as: User.self)
    /// ```
    /// - Parameters:
    ///   - path: The path below the base URL, as plain text (see ``Endpoint/path``).
    ///   - json: The body, encoded as JSON with `Content-Type: application/json`.
    ///   - query: Query items, as plain text; none by default.
    ///   - headers: Headers; they win over the client's default headers of the same name.
    ///   - type: What the body decodes to (see ``get(_:query:headers:as:)``); ``EmptyResponse``
    ///     for an answer without a body.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/invalidRequest`` when `json` cannot be encoded.
    public func post<Body: Encodable, Output: Decodable & Sendable>(
        _ path: String, json: Body, query: [QueryItem] = [], headers: RequestHeaders = [:], as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(PathCall<Output>(method: .post, path: path, query: query, headers: headers, body: .json(json)))
    }
}
