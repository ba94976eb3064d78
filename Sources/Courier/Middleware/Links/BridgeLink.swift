import Foundation
import HTTPTypes

/// The chain's bridge link, between the caller's request and the wire: it advertises the content
/// codings Courier decodes and undoes them on the response, with ``Decompression``'s rules, the
/// same whichever transport carries the call. Runs once per hop (after follow-up).
///
/// - The request gets `Accept-Encoding: gzip, deflate` unless it has an `Accept-Encoding` of its
///   own; then the response is returned as it came (the caller's opt-out). The value is added
///   with the client's default headers, once per client (``advertises(_:transport:)``), so the
///   link costs a call nothing until a response is encoded.
/// - A response with `Content-Encoding` is decoded as it is read; its head loses
///   `Content-Encoding` and `Content-Length` (they described the encoded bytes).
/// - With a transport that always decodes (``Transport/decodesContentCodings``), nothing is
///   advertised or decoded again: the codings named are still checked, and the delivered body
///   is held to the ratio against the announced length.
struct BridgeLink: Sendable {
    let decompression: Decompression
    let transportDecodes: Bool

    /// The link's work on a response to `request`: decoded when it is encoded and the caller did
    /// not choose its own `Accept-Encoding`; otherwise as it came.
    func decodedIfEncoded(_ response: TransportResponse, to request: HTTPRequest, context: RequestContext) throws(NetworkError)
        -> TransportResponse
    {
        guard decodes(response.head, of: request) else { return response }
        return try decoded(response, method: request.method, context: context)
    }

    /// Whether the link decodes a response with `head` to `request`: decoding is on, the head
    /// names a coding, and the caller did not choose its own `Accept-Encoding` (unless the
    /// transport decodes whatever it is told). Callers that hold the response check this first,
    /// so a response that passes as it came is not copied.
    func decodes(_ head: HTTPResponse, of request: HTTPRequest) -> Bool {
        guard decompression.isEnabled, head.headerFields.contains(.contentEncoding) else { return false }
        return transportDecodes || request.headerFields[.acceptEncoding] == Decompression.acceptEncoding
    }

    /// Whether requests get `Accept-Encoding: gzip, deflate` from the client: decoding is on and
    /// the transport does not advertise and decode on its own.
    static func advertises(_ decompression: Decompression, transport: any Transport) -> Bool {
        decompression.isEnabled && !transport.decodesContentCodings
    }

    /// The response with its body decoded (or, when the transport decoded it, held to the limits).
    private func decoded(_ response: TransportResponse, method: HTTPRequest.Method, context: RequestContext) throws(NetworkError)
        -> TransportResponse
    {
        let head = response.head
        guard Self.hasBody(status: head.status.code, method: method) else { return response }
        let codings = try ContentCoding.decodingOrder(of: head.headerFields, maxCodings: decompression.maxCodings)
        guard !codings.isEmpty else { return response }
        let names = head.headerFields[values: .contentEncoding].joined(separator: ", ")
        var decodedHead = head
        decodedHead.headerFields[.contentEncoding] = nil
        decodedHead.headerFields[.contentLength] = nil
        let limits = DecodedBody.Limits(maxBytes: context.maxResponseBytes, maxRatio: decompression.maxRatio)
        if transportDecodes {
            let announced = response.body.expectedLength ?? head.headerFields[.contentLength].flatMap { Int64($0) }
            let body = RatioCheckedBody.wrap(response.body, encodedLength: announced, names: names, limits: limits)
            return TransportResponse(head: decodedHead, body: body)
        }
        let body = try DecodedBody.decode(response.body, codings: codings, names: names, limits: limits)
        return TransportResponse(head: decodedHead, body: body)
    }

    /// Whether a response to `method` with `status` has a body to decode: one that may carry a
    /// body at all (``framesBody(status:method:)``), and not a redirect the follow-up link will drop.
    static func hasBody(status: Int, method: HTTPRequest.Method) -> Bool {
        framesBody(status: status, method: method) && !RedirectRule.redirects(status)
    }

    /// Whether a response to `method` with `status` may carry a body at all (RFC 9110 6.4.1): not
    /// a HEAD response, not `1xx`, `204` or `304`.
    static func framesBody(status: Int, method: HTTPRequest.Method) -> Bool {
        method != .head && status >= 200 && status != 204 && status != 304
    }
}

/// A body the transport already decoded, counted against the ratio to the encoded length it
/// announced (the cap itself applies when the body is collected). With no length announced there
/// is nothing to count against: such a transport (URLSession, whose library counts no bytes before
/// decoding) holds the body to the cap alone.
enum RatioCheckedBody {
    static func wrap(_ body: ResponseBody, encodedLength: Int64?, names: String, limits: DecodedBody.Limits) -> ResponseBody {
        guard let encodedLength, encodedLength > 0 else { return body }
        let ceiling = max(Int64(Decompression.ratioFloorBytes), encodedLength * Int64(limits.maxRatio))
        let counter = Counter(body.makeAsyncIterator())
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: {
            guard let chunk = try await counter.next() else { return nil }
            if counter.total > ceiling {
                throw NetworkError(
                    kind: .responseTooLarge, phase: .receiving,
                    message: "the \(names) body decodes to more than \(limits.maxRatio) times its \(encodedLength) announced bytes")
            }
            return chunk
        })
        return ResponseBody(stream: stream, expectedLength: nil)
    }

    /// Counts what a single reader took.
    final class Counter: @unchecked Sendable {
        private var iterator: ResponseBody.AsyncIterator
        private(set) var total: Int64 = 0
        init(_ iterator: ResponseBody.AsyncIterator) { self.iterator = iterator }
        func next() async throws -> Data? {
            let chunk = try await iterator.next()
            total += Int64(chunk?.count ?? 0)
            return chunk
        }
    }
}
