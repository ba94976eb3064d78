import Foundation
import HTTPTypes

/// Turns a response body into an API's output.
///
/// Pick one of the ready-made decoders, or write your own with ``init(_:)``:
/// - ``json(_:)`` for any `Decodable` (the default for `Decodable` outputs);
/// - ``data`` for raw bytes, ``string`` for UTF-8 text, ``empty`` to ignore the body.
///
/// ``automatic`` chooses among these from the output type and the response's `Content-Type` at
/// run time (JSON, or XML when the program links `CourierXML`); an output type or a media type it
/// cannot handle fails the call with ``NetworkError/Kind/decoding`` naming it.
///
/// A decoder that throws a ``NetworkError`` fails the call with that error as it is (its kind
/// and phase kept): that is how a SOAP fault becomes ``NetworkError/Kind/soapFault``. Any other
/// error fails the call with ``NetworkError/Kind/decoding``.
public struct ResponseDecoder<Output: Sendable>: Sendable {
    /// The decoder's function, given the body, the head and the client's JSON decoder; `nil` for
    /// ``automatic``, which is a plain function of `Output` (a closure would cost an allocation per
    /// call, since it captures `Output`'s metadata).
    private let custom: (@Sendable (Data, HTTPResponse, JSONDecoder) throws -> Output)?

    /// A custom decoder.
    /// - Parameter decode: Turns the body and the response head into the output; throw to fail
    ///   the call with ``NetworkError/Kind/decoding``, or throw a ``NetworkError`` to fail it with
    ///   that error.
    public init(_ decode: @escaping @Sendable (Data, HTTPResponse) throws -> Output) {
        custom = { data, head, _ in try decode(data, head) }
    }

    /// A decoder that also reads the client's JSON decoder.
    private init(withClientJSON decode: @escaping @Sendable (Data, HTTPResponse, JSONDecoder) throws -> Output) {
        custom = decode
    }

    private init(automatic: Void) {
        custom = nil
    }

    /// Decodes a body; `json` is the client's decoder (``NetworkClient/jsonDecoder``), read only
    /// when JSON is decoded (a `Data` or `String` output pays nothing for it).
    func decode(_ data: Data, _ head: HTTPResponse, json: @autoclosure () -> JSONDecoder) throws -> Output {
        guard let custom else { return try Self.decodeAutomatically(data, head, json: json(), xml: XMLDecodingHook.decoder) }
        return try custom(data, head, json())
    }

    /// Decodes JSON.
    /// - Parameter decoder: The decoder; `nil` (the default) uses the client's
    ///   (``NetworkClient/jsonDecoder``, made from ``ClientConfiguration/json``).
    /// - Returns: The decoder.
    public static func json(_ decoder: JSONDecoder? = nil) -> ResponseDecoder where Output: Decodable {
        ResponseDecoder(withClientJSON: { data, _, client in try (decoder ?? client).decode(Output.self, from: data) })
    }

    /// Picks a decoder from `Output` and the response's `Content-Type`: `Data`, `String` and
    /// ``EmptyResponse`` as they are; any other `Decodable` as JSON or XML by media type.
    ///
    /// - `application/json`, `text/json`, `+json`, or no `Content-Type` at all: JSON.
    /// - `application/xml`, `text/xml`, `+xml` (SOAP, Atom): XML, when the program links the
    ///   `CourierXML` product; without it the call fails with ``NetworkError/Kind/decoding`` saying
    ///   that the product is missing.
    /// - Any other media type: JSON is tried, and a failure names the media type it met.
    public static var automatic: ResponseDecoder { ResponseDecoder(automatic: ()) }

    /// ``automatic``'s work, with the JSON decoder and the XML decoder given (`nil`: `CourierXML` is
    /// not linked). Tests use it: SwiftPM links every test target into one process, where
    /// `CourierXML` always is.
    package static func decodeAutomatically(
        _ data: Data, _ head: HTTPResponse, json: @autoclosure () -> JSONDecoder, xml linkedXML: (any AutomaticXMLDecoding.Type)?
    ) throws -> Output {
        if let value = data as? Output { return value }
        if Output.self == String.self {
            guard let text = String(data: data, encoding: .utf8), let value = text as? Output else {
                throw DecodingProblem("the body is not valid UTF-8")
            }
            return value
        }
        if let value = EmptyResponse() as? Output { return value }
        guard let decodable = Output.self as? any Decodable.Type else {
            throw DecodingProblem("\(Output.self) is not Decodable; give the API a decoder with ResponseDecoder { data, head in … }")
        }
        switch BodyFormat(head) {
        case .json, .unstated:
            return try decodeJSON(decodable, from: data, with: json())
        case .xml:
            guard let xml = linkedXML else {
                throw DecodingProblem(
                    "the response is XML (\(head.headerFields[.contentType] ?? "")); link the CourierXML product (package trait XML) to decode it, or give the call a decoder"
                )
            }
            return try decodeXML(decodable, from: data, with: xml)
        case .other(let mediaType):
            do {
                return try decodeJSON(decodable, from: data, with: json())
            } catch {
                throw DecodingProblem(
                    "the response's Content-Type is \(mediaType), which is neither JSON nor XML, and the body is not JSON either: \(error)"
                )
            }
        }
    }

    private static func decodeJSON<Value: Decodable>(_ type: Value.Type, from data: Data, with json: JSONDecoder) throws -> Output {
        let value = try json.decode(type, from: data)
        guard let output = value as? Output else { throw DecodingProblem("decoded \(Value.self), expected \(Output.self)") }
        return output
    }

    private static func decodeXML<Value: Decodable>(
        _ type: Value.Type, from data: Data, with xml: any AutomaticXMLDecoding.Type
    ) throws -> Output {
        let value = try xml.decodeXML(type, from: data)
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
