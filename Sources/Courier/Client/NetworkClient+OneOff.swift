import Foundation
import HTTPTypes

/// A call made by its path: what the one-off calls
/// (``NetworkClient/send(_:_:query:headers:body:timeout:as:)`` and ``NetworkClient/get(_:query:headers:timeout:as:)``,
/// `post`, `put`, `patch`, `delete`, `head`) send. Every other field is the `Endpoint` default, so
/// the call passes the same chain as an API object: team headers, retry, cache, queue, metrics.
struct PathCall<Output: Sendable>: Endpoint {
    var method: HTTPRequest.Method
    var path: String
    var query: [QueryItem]
    var headers: RequestHeaders
    var body: RequestBody?
    var timeout: Duration?
}

extension NetworkClient {
    /// Sends a request with any method to a path below the base URL and decodes the answer: one
    /// line for a call that needs no API object of its own. The other one-off calls (`get`,
    /// `post`, `put`, `patch`, `delete`, `head`) are this with their method.
    ///
    /// Use it for a call made from one place. A call made from several places, or one that needs
    /// its own team, queue or decoder, reads better as an ``Endpoint`` or a ``BaseAPI``.
    ///
    /// ```swift
    /// let report = try await client.send(.post, "reports", body: .form([("month", "2026-11")]), timeout: .seconds(60), as: Report.self)
    /// ```
    /// - Parameters:
    ///   - method: The request method.
    ///   - path: The path below the base URL, as plain text (see ``Endpoint/path``).
    ///   - query: Query items, as plain text; none by default.
    ///   - headers: Headers; they win over the client's default headers of the same name.
    ///   - body: The body (``RequestBody/json(_:encoder:)-(_,JSONEncoder?)``, ``RequestBody/form(_:)``,
    ///     ``RequestBody/data(_:contentType:)``, ``RequestBody/file(_:contentType:)``); none by default.
    ///   - timeout: The call's deadline from its start; the client's
    ///     ``ClientConfiguration/requestTimeout`` when `nil`.
    ///   - type: What the body decodes to: JSON for a `Decodable` type (XML when `CourierXML` is
    ///     linked and the answer is XML), `Data` or `String` as they came, ``EmptyResponse`` for an
    ///     answer without a body.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/invalidRequest`` for a timeout that is not
    ///   positive or a body that cannot be encoded.
    public func send<Output: Decodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], body: RequestBody? = nil,
        timeout: Duration? = nil, as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(PathCall<Output>(method: method, path: path, query: query, headers: headers, body: body, timeout: timeout))
    }

    /// Sends a `GET` to a path below the base URL and decodes the answer.
    ///
    /// ```swift
    /// let client = try NetworkClient(baseURL: "https://api.example.com")
    /// let user = try await client.get("users/42", as: User.self)
    /// ```
    /// - Parameters:
    ///   - path: The path below the base URL, as plain text (see ``Endpoint/path``).
    ///   - query: Query items, as plain text; none by default.
    ///   - headers: Headers; they win over the client's default headers of the same name.
    ///   - timeout: The call's deadline; the client's request timeout when `nil`.
    ///   - type: What the body decodes to (see ``send(_:_:query:headers:body:timeout:as:)``).
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``.
    public func get<Output: Decodable & Sendable>(
        _ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil,
        as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(.get, path, query: query, headers: headers, timeout: timeout, as: type)
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
    ///   - timeout: The call's deadline; the client's request timeout when `nil`.
    ///   - type: What the body decodes to (see ``send(_:_:query:headers:body:timeout:as:)``).
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/invalidRequest`` when `json` cannot be encoded.
    public func post<Body: Encodable & Sendable, Output: Decodable & Sendable>(
        _ path: String, json: Body, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil,
        as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(.post, path, query: query, headers: headers, body: .json(json), timeout: timeout, as: type)
    }

    /// Sends a `PUT` with a JSON body to a path below the base URL and decodes the answer.
    /// - Parameters: As ``post(_:json:query:headers:timeout:as:)``.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/invalidRequest`` when `json` cannot be encoded.
    public func put<Body: Encodable & Sendable, Output: Decodable & Sendable>(
        _ path: String, json: Body, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil,
        as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(.put, path, query: query, headers: headers, body: .json(json), timeout: timeout, as: type)
    }

    /// Sends a `PATCH` with a JSON body to a path below the base URL and decodes the answer.
    /// - Parameters: As ``post(_:json:query:headers:timeout:as:)``.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``; ``NetworkError/Kind/invalidRequest`` when `json` cannot be encoded.
    public func patch<Body: Encodable & Sendable, Output: Decodable & Sendable>(
        _ path: String, json: Body, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil,
        as type: Output.Type = Output.self
    ) async throws -> Output {
        try await send(.patch, path, query: query, headers: headers, body: .json(json), timeout: timeout, as: type)
    }

    /// Sends a `DELETE` to a path below the base URL and decodes the answer.
    ///
    /// ```swift
    /// let removed = try await client.delete("users/42", as: Receipt.self)
    /// ```
    /// - Parameters: As ``get(_:query:headers:timeout:as:)``.
    /// - Returns: The decoded body.
    /// - Throws: ``NetworkError``.
    public func delete<Output: Decodable & Sendable>(
        _ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil,
        as type: Output.Type
    ) async throws -> Output {
        try await send(.delete, path, query: query, headers: headers, timeout: timeout, as: type)
    }

    /// Sends a `DELETE` to a path below the base URL; the answer's body, if any, is not read into
    /// a value.
    ///
    /// ```swift
    /// try await client.delete("users/42")
    /// ```
    /// - Parameters: As ``get(_:query:headers:timeout:as:)``.
    /// - Throws: ``NetworkError``.
    public func delete(_ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil) async throws {
        _ = try await send(.delete, path, query: query, headers: headers, timeout: timeout, as: Data.self)
    }

    /// Sends a `HEAD` to a path below the base URL and returns the answer's head.
    ///
    /// ```swift
    /// let head = try await client.head("reports/7")
    /// let size = head.headerFields[.contentLength]
    /// ```
    /// - Parameters: As ``get(_:query:headers:timeout:as:)``.
    /// - Returns: The status and headers.
    /// - Throws: ``NetworkError``; a status the client does not accept is ``NetworkError/Kind/httpStatus``.
    public func head(
        _ path: String, query: [QueryItem] = [], headers: RequestHeaders = [:], timeout: Duration? = nil
    ) async throws -> HTTPResponse {
        let call = PathCall<Data>(method: .head, path: path, query: query, headers: headers, body: nil, timeout: timeout)
        return try await response(for: call).head
    }
}
