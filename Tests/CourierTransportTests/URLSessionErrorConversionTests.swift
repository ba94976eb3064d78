import Courier
import Foundation
import Testing

@testable import CourierURLSession

/// FoundationNetworking files most of libcurl's failures under NSURLErrorUnknown with libcurl's
/// text; the texts the URLSession mutation sweep met (libcurl 7.88 and 8.14) map to the kinds the
/// other transports give.
@Suite("URLSession: libcurl's texts under NSURLErrorUnknown")
struct URLSessionErrorConversionTests {
    static func convert(_ message: String, receivedHead: Bool) -> NetworkError {
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [NSLocalizedDescriptionKey: message])
        return URLSessionConversion.networkError(from: error, receivedHead: receivedHead)
    }

    @Test(
        "a malformed head or body framing is an invalid response",
        arguments: [
            "Header without colon", "Invalid response header", "Invalid Content-Length: value",
            "Malformed encoding found in chunked-encoding", "Too long hexadecimal number in chunked-encoding",
            "Illegal or missing hexadecimal sequence in chunked-encoding", "Failed reading the chunked-encoded stream",
            "Unsolicited Transfer-Encoding (chuked) found", "Failed writing received data to disk/application",
        ])
    func malformed(message: String) {
        for receivedHead in [false, true] {
            let error = Self.convert(message, receivedHead: receivedHead)
            #expect(error.kind == .invalidResponse, "\(message)")
            #expect(error.message == message)
        }
        #expect(Self.convert(message, receivedHead: true).phase == .receiving)
    }

    @Test(
        "a connection that closed or was reset is a closed connection",
        arguments: [
            "transfer closed with 13 bytes remaining to read", "end of response with 53 bytes missing",
            "transfer closed with outstanding read data remaining", "Recv failure: Connection reset by peer",
            "Send failure: Broken pipe",
        ])
    func closed(message: String) {
        #expect(Self.convert(message, receivedHead: true).kind == .connectionClosed, "\(message)")
        #expect(Self.convert(message, receivedHead: true).phase == .receiving)
    }

    @Test(
        "a certificate or handshake failure is a TLS failure, under \"unknown\" (libcurl 7) or \"cannot connect\" (libcurl 8)",
        arguments: [NSURLErrorUnknown, NSURLErrorCannotConnectToHost])
    func certificate(code: Int) {
        let message = "SSL certificate problem: unable to get local issuer certificate"
        let error = NSError(domain: NSURLErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: message])
        let converted = URLSessionConversion.networkError(from: error, receivedHead: false)
        #expect(converted.kind == .tlsFailure)
        #expect(converted.phase == .tls)
        // A plain refused connection stays a connect failure.
        let refused = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost,
            userInfo: [NSLocalizedDescriptionKey: "Failed to connect to 127.0.0.1 port 9: Connection refused"])
        #expect(URLSessionConversion.networkError(from: refused, receivedHead: false).kind == .connectFailure)
    }

    @Test("\"cannot connect\" after the head arrived is a body cut off (libcurl 8 kept a refused attempt's errno)")
    func cutAfterHead() {
        let cut = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost,
            userInfo: [NSLocalizedDescriptionKey: "end of response with 200000 bytes missing"])
        let converted = URLSessionConversion.networkError(from: cut, receivedHead: true)
        #expect(converted.kind == .connectionClosed && converted.phase == .receiving)
        #expect(URLSessionConversion.networkError(from: cut, receivedHead: false).kind == .connectFailure)
    }

    @Test("an unknown error with no text stays a transport failure: nothing to classify it by")
    func silent() {
        #expect(Self.convert("", receivedHead: false).kind == .transportFailure)
    }
}
