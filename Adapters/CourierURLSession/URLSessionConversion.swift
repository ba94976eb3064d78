import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Pure conversions between Courier's types and URLSession's; tested without a network.
enum URLSessionConversion {
    /// The URLRequest for a Courier request, with the call's remaining time as its timeout.
    static func urlRequest(from request: HTTPRequest, timeout: Duration) throws(NetworkError) -> URLRequest {
        let text = urlText(of: request)
        guard let url = URL(string: text) else {
            throw NetworkError.invalidRequest("URLSession cannot represent the URL \(Redaction.redactedURL(text))")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = false
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        urlRequest.timeoutInterval = max(0.001, seconds)
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        return urlRequest
    }

    /// The URL FoundationNetworking is given for a request. An IPv6 literal host (`[::1]`) goes
    /// percent-encoded (`%5B%3A%3A1%5D`): FoundationNetworking (Swift 6.3) refuses a URL whose host,
    /// as Foundation reads it (`::1`, brackets stripped), differs from libcurl's (`[::1]`), as
    /// `NSURLErrorBadURL`; encoded, Foundation reads `[::1]` as libcurl does, and libcurl connects to
    /// the address with `Host: [::1]:port`. The conformance case `ipv6Literal` shows the day a
    /// toolchain changes either side.
    static func urlText(of request: HTTPRequest) -> String {
        guard let authority = request.authority, authority.hasPrefix("["), let close = authority.firstIndex(of: "]") else {
            return request.urlText
        }
        let literal = authority[...close]
        let encoded = literal.replacingOccurrences(of: "[", with: "%5B").replacingOccurrences(of: ":", with: "%3A")
            .replacingOccurrences(of: "]", with: "%5D")
        return (request.scheme ?? "http") + "://" + encoded + authority[authority.index(after: close)...] + (request.path ?? "/")
    }

    /// The response head for an `HTTPURLResponse`, or the error for one whose fields break
    /// ``ResponseHeadChecks``' syntax: FoundationNetworking keeps a bare CR or a control character
    /// in a value, and it must fail here as on every transport, not be smoothed over by
    /// `HTTPField`. (It refuses NUL and malformed names itself; see ``networkError(from:receivedHead:)``.)
    static func responseHead(from response: HTTPURLResponse) -> Result<HTTPResponse, NetworkError> {
        var fields = HTTPFields()
        let pairs = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }
        for (name, value) in pairs.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            if let problem = ResponseHeadChecks.fieldNameProblem(Array(name.utf8)) ?? ResponseHeadChecks.fieldValueProblem(value.utf8) {
                return .failure(ResponseHeadChecks.invalid(problem))
            }
            guard let fieldName = HTTPField.Name(name) else {
                return .failure(ResponseHeadChecks.invalid("a header field name is not valid"))
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        let code = (100...999).contains(response.statusCode) ? response.statusCode : 500
        return .success(HTTPResponse(status: HTTPResponse.Status(code: code), headerFields: fields))
    }

    /// The NetworkError for an error URLSession reported.
    ///
    /// - Parameters:
    ///   - error: What URLSession reported.
    ///   - receivedHead: Whether the response head had arrived (decides the phase of timeouts and resets).
    static func networkError(from error: any Error, receivedHead: Bool) -> NetworkError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return NetworkError.converting(error, phase: receivedHead ? .receiving : .transfer)
        }
        let code = URLError.Code(rawValue: nsError.code)
        let waitingPhase: NetworkError.Phase = receivedHead ? .receiving : .awaitingResponse
        let (kind, phase): (NetworkError.Kind, NetworkError.Phase) =
            switch code {
            case .cancelled: (.cancelled, waitingPhase)
            case .timedOut: (.timedOut, waitingPhase)
            case .cannotFindHost, .dnsLookupFailed: (.dnsFailure, .dns)
            case .cannotConnectToHost where !receivedHead && nsError.localizedDescription.hasPrefix("SSL "):
                // libcurl 8's certificate failures ("SSL certificate problem: ..."), which
                // FoundationNetworking files under "cannot connect to host".
                (.tlsFailure, .tls)
            case .cannotConnectToHost where receivedHead:
                // With libcurl 8, FoundationNetworking files a body cut off ("end of response with N
                // bytes missing") under "cannot connect" when the connection's socket kept a refused
                // attempt's errno (`localhost` tried on ::1 first): after a head, it was connected.
                (.connectionClosed, .receiving)
            case .cannotConnectToHost, .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
                (.connectFailure, .connect)
            case .networkConnectionLost: (.connectionClosed, waitingPhase)
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
                .clientCertificateRequired:
                (.tlsFailure, .tls)
            case .unknown where !receivedHead && nsError.localizedDescription.hasPrefix("SSL "),
                .unknown where nsError.localizedDescription.hasPrefix("SSL certificate problem"):
                // libcurl's certificate and handshake failures (CURLE_PEER_FAILED_VERIFICATION,
                // CURLE_SSL_CONNECT_ERROR), which FoundationNetworking reports as "unknown" with
                // libcurl's text ("SSL certificate problem: ..."). Through a proxy a certificate
                // problem comes after a head: FoundationNetworking hands the proxy's answer to
                // `CONNECT` over as a response. It is still the handshake's failure.
                (.tlsFailure, .tls)
            case .badServerResponse where !receivedHead && nsError.localizedDescription.hasPrefix("Empty reply from server"):
                // libcurl's CURLE_GOT_NOTHING, which FoundationNetworking files under "bad
                // server response": the server closed without answering.
                (.connectionClosed, .awaitingResponse)
            case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData, .zeroByteResource:
                (.invalidResponse, waitingPhase)
            case .unsupportedURL:
                // Courier only sends http and https URLs it built itself, so this is libcurl
                // refusing the reply ("Received HTTP/0.9 when not allowed"): a malformed response.
                (.invalidResponse, waitingPhase)
            case .httpTooManyRedirects, .redirectToNonExistentLocation: (.tooManyRedirects, .receiving)
            case .dataLengthExceedsMaximum: (.responseTooLarge, .receiving)
            case .badURL: (.invalidRequest, .building)
            case .requestBodyStreamExhausted: (.transportFailure, .sending)
            case _ where Self.refusedHeadMessages.contains(where: nsError.localizedDescription.hasPrefix):
                // libcurl (under FoundationNetworking) refusing a header line: a NUL byte
                // ("Nul byte in header"), or FoundationNetworking's own header callback refusing a
                // line it cannot parse, such as a space before the colon ("Failed writing header"
                // on 7.88), or libcurl 8's own header limits.
                (.invalidResponse, receivedHead ? .receiving : .awaitingResponse)
            case _ where Self.malformedBodyMessages.contains(where: nsError.localizedDescription.hasPrefix):
                // libcurl refusing a chunked body or a length it cannot read: a malformed answer,
                // as the other transports report it (found by the mutated-response sweep).
                (.invalidResponse, receivedHead ? .receiving : .awaitingResponse)
            case _
            where nsError.localizedDescription.hasPrefix("transfer closed with")
                || nsError.localizedDescription.hasPrefix("end of response with"):
                // libcurl's CURLE_PARTIAL_FILE ("end of response with N bytes missing" on 8.x):
                // the server closed before the body it announced was complete.
                (.connectionClosed, receivedHead ? .receiving : .awaitingResponse)
            case _ where nsError.localizedDescription.hasPrefix("Send failure:"):
                // libcurl's CURLE_SEND_ERROR ("Broken pipe"): the server closed while the request
                // was still being written.
                (.connectionClosed, receivedHead ? .receiving : .sending)
            case _ where nsError.localizedDescription.hasPrefix("Recv failure:"):
                // libcurl's CURLE_RECV_ERROR when FoundationNetworking files it as "unknown"
                // ("Connection reset by peer").
                (.connectionClosed, receivedHead ? .receiving : .awaitingResponse)
            case _ where nsError.localizedDescription.hasPrefix("Failed writing received data"):
                // FoundationNetworking's body callback refusing bytes it cannot place (a body
                // where the head said there is none): the answer's fault.
                (.invalidResponse, .receiving)
            case _ where Self.contentDecodingMessages.contains(where: nsError.localizedDescription.hasPrefix):
                // libcurl (under FoundationNetworking, which always decodes) failing to undo a
                // content coding: corrupt data, or too many codings. The same kind as Courier's
                // own decoder gives on the other transports.
                (.decoding, .receiving)
            default: (.transportFailure, receivedHead ? .receiving : .transfer)
            }
        return NetworkError(
            kind: kind, phase: phase, message: nsError.localizedDescription,
            nativeCode: NetworkError.NativeCode(domain: NSURLErrorDomain, code: nsError.code), underlying: error
        )
    }

    /// The beginnings of libcurl's texts for a response head it, or FoundationNetworking's header
    /// callback, refused. They differ between libcurl 7.88 and 8.x: "Failed writing header" became
    /// "Failure writing output to destination", and 8.x counts headers itself.
    static let refusedHeadMessages = [
        "Nul byte in header", "Failed writing header", "Failure writing output to destination", "Too many response headers",
        "Too large response headers", "Header without colon", "Invalid response header",
    ]

    /// The beginnings of libcurl's texts for a body framing it could not read: a chunked body or
    /// a `Content-Length`.
    static let malformedBodyMessages = [
        "Malformed encoding found in chunked-encoding", "Too long hexadecimal number in chunked-encoding", "chunk hex-length",
        "invalid chunk length", "Invalid Content-Length", "Illegal or missing hexadecimal sequence in chunked-encoding",
        "Failed reading the chunked-encoded stream", "Unsolicited Transfer-Encoding",
    ]

    /// The beginnings of libcurl's texts for a body it could not decode.
    static let contentDecodingMessages = [
        "Error while processing content unencoding", "Reject response due to", "Unrecognized content encoding",
    ]

    /// The error for a `1xx` interim response, which URLSession on Linux mistakes for the final one.
    /// - Parameter status: The interim status.
    /// - Returns: An `NetworkError/Kind/unsupported` error that names the alternatives.
    static func interimResponseUnsupported(status: Int) -> NetworkError {
        NetworkError(
            kind: .unsupported, phase: .awaitingResponse,
            message:
                "the server sent an interim \(status) response, which URLSession on Linux mistakes for the final one; use the curl or ahc transport for this server",
            status: status)
    }
}
