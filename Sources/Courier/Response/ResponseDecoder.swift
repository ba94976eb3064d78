import Foundation
import HTTPTypes

/// Turns a response body into an API's output.
///
/// Pick one of the ready-made decoders, or write your own with ``init(_:)``:
/// - ``json(_:)`` for any `Decodable` (the default for `Decodable` outputs);
/// - ``data`` for raw bytes, ``string`` for UTF-8 text, ``empty`` to ignore the body.
///
/// ``automatic`` chooses among these from the output type at run time; an output type it
/// cannot handle fails the call with ``NetworkError/Kind/decoding`` naming the type.
public struct ResponseDecoder<Output: Sendable>: Sendable {
    /// The decoder's function; `nil` for ``automatic``, which is a plain function of `Output` (a
    /// closure would cost an allocation per call, since it captures `Output`'s metadata).
    private let custom: (@Sendable (Data, HTTPResponse) throws -> Output)?

    /// A custom decoder.
    /// - Parameter decode: Turns the body and the response head into the output; throw to fail
    ///   the call with ``NetworkError/Kind/decoding``.
    public init(_ decode: @escaping @Sendable (Data, HTTPResponse) throws -> Output) {
        custom = decode
    }

    private init(automatic: Void) {
        custom = nil
    }

    /// Decodes a body.
    func decode(_ data: Data, _ head: HTTPResponse) throws -> Output {
        guard let custom else { return try Self.decodeAutomatically(data) }
        return try custom(data, head)
    }

    /// Decodes JSON.
    /// - Parameter decoder: The decoder; a plain `JSONDecoder` by default.
    /// - Returns: The decoder.
    public static func json(_ decoder: JSONDecoder = JSONDecoder()) -> ResponseDecoder where Output: Decodable {
        ResponseDecoder { data, _ in try decoder.decode(Output.self, from: data) }
    }

    /// Picks a decoder from `Output`: `Data`, `String`, ``EmptyResponse``, or JSON for any
    /// other `Decodable`.
    public static var automatic: ResponseDecoder { ResponseDecoder(automatic: ()) }

    private static func decodeAutomatically(_ data: Data) throws -> Output {
        if let value = data as? Output { return value }
        if Output.self == String.self {
            guard let text = String(data: data, encoding: .utf8), let value = text as? Output else {
                throw DecodingProblem("the body is not valid UTF-8")
            }
            return value
        }
        if let value = EmptyResponse() as? Output { return value }
        if let decodable = Output.self as? any Decodable.Type {
            return try decodeJSON(decodable, from: data)
        }
        throw DecodingProblem("\(Output.self) is not Decodable; give the API a decoder with ResponseDecoder { data, head in … }")
    }

    private static func decodeJSON<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Output {
        let value = try JSONDecoder().decode(type, from: data)
        guard let output = value as? Output else { throw DecodingProblem("decoded \(Value.self), expected \(Output.self)") }
        return output
    }
}

extension ResponseDecoder where Output == Data {
    /// The body's bytes as they are.
    public static var data: ResponseDecoder { ResponseDecoder { data, _ in data } }
}

extension ResponseDecoder where Output == String {
    /// The body as UTF-8 text; invalid UTF-8 fails with ``NetworkError/Kind/decoding``.
    public static var string: ResponseDecoder {
        ResponseDecoder { data, _ in
            guard let text = String(data: data, encoding: .utf8) else { throw DecodingProblem("the body is not valid UTF-8") }
            return text
        }
    }
}

extension ResponseDecoder where Output == EmptyResponse {
    /// Ignores the body (for 204 responses, HEAD requests and calls whose body does not matter).
    public static var empty: ResponseDecoder { ResponseDecoder { _, _ in EmptyResponse() } }
}

/// The output of a call whose response body is ignored.
public struct EmptyResponse: Sendable, Hashable, Decodable {
    /// Creates the (only) value.
    public init() {}
}

/// A decoding failure with a message, wrapped into ``NetworkError/Kind/decoding`` by the client.
struct DecodingProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
