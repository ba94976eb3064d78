import Courier
import Foundation

/// One scripted answer of a ``MockTransport`` stub: a response, or a failure, after an optional delay.
public struct MockResponse: Sendable {
    enum Outcome: Sendable {
        case respond(status: Int, headers: RequestHeaders, body: Data)
        case fail(NetworkError)
    }

    let outcome: Outcome
    /// How long the transport waits before answering (cancellation interrupts the wait).
    public var delay: Duration?

    /// A response with a status, headers and a body.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The response headers.
    ///   - body: The body bytes.
    ///   - delay: A wait before answering.
    /// - Returns: The scripted response.
    public static func status(_ status: Int, headers: RequestHeaders = [:], body: Data = Data(), delay: Duration? = nil) -> MockResponse {
        MockResponse(outcome: .respond(status: status, headers: headers, body: body), delay: delay)
    }

    /// A JSON response from an `Encodable` value (`Content-Type: application/json`).
    /// - Parameters:
    ///   - value: The value to encode; an encoding failure becomes a scripted `NetworkError/Kind/invalidResponse`.
    ///   - status: The status code; 200 by default.
    ///   - encoder: The encoder; a plain `JSONEncoder` by default (give the client's
    ///     `jsonEncoder` when it writes dates or keys its own way).
    ///   - delay: A wait before answering.
    /// - Returns: The scripted response.
    public static func json<Value: Encodable>(
        _ value: Value, status: Int = 200, encoder: JSONEncoder = JSONEncoder(), delay: Duration? = nil
    ) -> MockResponse {
        do {
            let body = try encoder.encode(value)
            return .status(status, headers: ["Content-Type": "application/json"], body: body, delay: delay)
        } catch {
            return .failure(
                NetworkError(kind: .invalidResponse, phase: .receiving, message: "the mock's JSON could not be encoded: \(error)"),
                delay: delay)
        }
    }

    /// A text response (`Content-Type: text/plain; charset=utf-8`).
    /// - Parameters:
    ///   - text: The body.
    ///   - status: The status code; 200 by default.
    ///   - delay: A wait before answering.
    /// - Returns: The scripted response.
    public static func text(_ text: String, status: Int = 200, delay: Duration? = nil) -> MockResponse {
        .status(status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8), delay: delay)
    }

    /// A failure: the transport throws this error, of any kind, after the delay.
    /// - Parameters:
    ///   - error: The error to throw.
    ///   - delay: A wait before failing.
    /// - Returns: The scripted failure.
    public static func failure(_ error: NetworkError, delay: Duration? = nil) -> MockResponse {
        MockResponse(outcome: .fail(error), delay: delay)
    }
}
