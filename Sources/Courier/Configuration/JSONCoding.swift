import Foundation

/// How a client writes and reads JSON: the date and key formats of its one `JSONEncoder` and
/// `JSONDecoder`, made once per client.
///
/// Every JSON body the client encodes (``RequestBody/json(_:encoder:)-(_,JSONEncoder?)`` without an encoder, the
/// one-off calls' bodies) and every JSON answer it decodes (``ResponseDecoder/automatic``,
/// ``ResponseDecoder/json(_:)`` without a decoder, ``ErrorBodyDecoder/json(_:decoder:)`` without
/// one, event-stream data through `ServerSentEvents.decode(_:as:)`, JSON Lines) uses these
/// unless the endpoint or the call brings its own coder.
///
/// ```swift
/// var configuration = ClientConfiguration(baseURL: "https://api.example.com")
/// configuration.json.dates = .iso8601
/// ```
///
/// As configuration keys: `json.dates` and `json.keys`.
public struct JSONCoding: Sendable, Hashable {
    /// How dates are written and read.
    public enum DateFormat: String, Sendable, Hashable, CaseIterable {
        /// `Date`'s own `Codable` form (seconds since 2001-01-01), Foundation's default.
        case deferred
        /// ISO 8601 text in UTC, written in whole seconds (`2026-12-07T17:32:30Z`); reading also
        /// takes fractional seconds (`2026-12-07T17:32:30.125Z`) and offsets (`+01:00`).
        case iso8601
        /// Seconds since 1970-01-01 as a number.
        case seconds
        /// Milliseconds since 1970-01-01 as a number.
        case milliseconds
    }

    /// How property names map to JSON keys.
    public enum KeyFormat: String, Sendable, Hashable, CaseIterable {
        /// The property's name as it is.
        case asIs = "as-is"
        /// `snake_case` keys for `camelCase` properties (Foundation's `convertToSnakeCase` and
        /// `convertFromSnakeCase`: `orderID` is written `order_id` but `order_id` reads as
        /// `orderId`, and a type whose `CodingKeys` already say `order_id` no longer matches). It
        /// changes every body the client writes: set it for an API, not for a fleet.
        case snakeCase = "snake-case"
    }

    /// How dates are written and read; ``DateFormat/deferred`` by default.
    public var dates: DateFormat
    /// How keys are written and read; ``KeyFormat/asIs`` by default.
    public var keys: KeyFormat

    /// Creates the formats.
    /// - Parameters:
    ///   - dates: How dates are written and read.
    ///   - keys: How keys are written and read.
    public init(dates: DateFormat = .deferred, keys: KeyFormat = .asIs) {
        self.dates = dates
        self.keys = keys
    }

    /// A new decoder with these formats.
    public func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        switch dates {
        case .deferred: break
        case .iso8601: decoder.dateDecodingStrategy = .custom(Self.decodeISO8601)
        case .seconds: decoder.dateDecodingStrategy = .secondsSince1970
        case .milliseconds: decoder.dateDecodingStrategy = .millisecondsSince1970
        }
        if keys == .snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        return decoder
    }

    /// A new encoder with these formats.
    public func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        switch dates {
        case .deferred: break
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        case .seconds: encoder.dateEncodingStrategy = .secondsSince1970
        case .milliseconds: encoder.dateEncodingStrategy = .millisecondsSince1970
        }
        if keys == .snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        return encoder
    }

    /// ISO 8601 with or without fractional seconds (Foundation's `.iso8601` strategy refuses a
    /// fraction, which many APIs send).
    @Sendable private static func decodeISO8601(_ decoder: any Decoder) throws -> Date {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        // The server's text stays out of the message, which reaches errors and logs.
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "a date of \(text.utf8.count) bytes is not ISO 8601")
    }
}
