import Foundation

/// Which response statuses count as success for an API. Others fail the call with
/// ``NetworkError/Kind/httpStatus`` (and the error body, if the API declared one).
public struct StatusValidation: Sendable {
    let accepts: @Sendable (Int) -> Bool

    /// Accepts the statuses for which `accepts` returns `true`.
    /// - Parameter accepts: The test.
    public init(_ accepts: @escaping @Sendable (Int) -> Bool) {
        self.accepts = accepts
    }

    /// 200 to 299: the default.
    public static let successful = StatusValidation { (200..<300).contains($0) }

    /// Any status: the caller inspects the status itself.
    public static let any = StatusValidation { _ in true }

    /// The listed codes only.
    /// - Parameter codes: The accepted codes.
    /// - Returns: The validation.
    public static func codes(_ codes: Set<Int>) -> StatusValidation {
        StatusValidation { codes.contains($0) }
    }

    /// A range of codes.
    /// - Parameter range: The accepted codes.
    /// - Returns: The validation.
    public static func range(_ range: Range<Int>) -> StatusValidation {
        StatusValidation { range.contains($0) }
    }

    /// Whether `status` is accepted.
    /// - Parameter status: An HTTP status code.
    public func isAcceptable(_ status: Int) -> Bool { accepts(status) }
}

/// Decodes the body of a rejected response into a typed error body, carried in
/// ``NetworkError/decodedErrorBody``.
///
/// ```swift
/// struct APIProblem: Decodable, Sendable { let code: String; let message: String }
/// override var errorDecoder: ErrorBodyDecoder? { .json(APIProblem.self) }
/// // later: error.errorBody(as: APIProblem.self)?.code
/// ```
/// A body that does not decode leaves ``NetworkError/decodedErrorBody`` `nil`; the call still
/// fails with ``NetworkError/Kind/httpStatus`` and keeps the raw bytes.
public struct ErrorBodyDecoder: Sendable {
    /// Decodes the body, given the client's JSON decoder.
    let decode: @Sendable (Data, JSONDecoder) -> (any Sendable)?

    /// A custom error-body decoder; return `nil` when the body is not understood.
    /// - Parameter decode: Decodes the body.
    public init(_ decode: @escaping @Sendable (Data) -> (any Sendable)?) {
        self.decode = { data, _ in decode(data) }
    }

    private init(withClientJSON decode: @escaping @Sendable (Data, JSONDecoder) -> (any Sendable)?) {
        self.decode = decode
    }

    /// Decodes the error body as JSON.
    /// - Parameters:
    ///   - type: The error-body type.
    ///   - decoder: The decoder; `nil` (the default) uses the client's (``NetworkClient/jsonDecoder``).
    /// - Returns: The error-body decoder.
    public static func json<Body: Decodable & Sendable>(_ type: Body.Type, decoder: JSONDecoder? = nil) -> ErrorBodyDecoder {
        ErrorBodyDecoder(withClientJSON: { data, client in try? (decoder ?? client).decode(Body.self, from: data) })
    }
}
