import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension ConformanceCases {
    /// A response over TLS is whole only when its end is proven: by its length, by its last
    /// chunk, or, for a body that ends where the connection closes, by the server's
    /// `close_notify`. A close-delimited body cut without `close_notify` fails as
    /// `connection_closed` in the receiving phase, never as complete; a length or chunked body sent
    /// whole, a `204` and a `HEAD` answer are complete however the connection closes after them.
    /// Where the transport cannot see `close_notify` (``ConformanceTransport/provesCleanTLSClose``
    /// is `false`: curl below libcurl 8.14), a close-delimited body fails even after a clean close.
    public static func tlsEndProven(_ transport: ConformanceTransport) async throws {
        let server = try await FaultServer.start(tls: true)
        let client = try transport.makeClient(baseURL: server.baseURL) { configuration in
            configuration.tls.caPEM = TestCertificates.caPEM
            // A clock that never moves: no ending may pass as a timeout, however busy the machine.
            configuration.requestTimeout = .seconds(60)
            configuration.timeSource = ManualTimeSource()
        }
        for ending in FaultServer.TLSEnding.allCases {
            let call = RawEndpoint(path: "tls-end/\(ending.rawValue)")
            let proven: Bool =
                switch ending {
                case .closeDelimitedUnclean: false
                case .closeDelimitedClean: transport.provesCleanTLSClose
                case .lengthUnclean, .chunkedUnclean, .noContentUnclean: true
                }
            if proven {
                let body = try await client.send(call)
                let expected = ending == .noContentUnclean ? "" : FaultServer.tlsEndingBody
                #expect(String(decoding: body, as: UTF8.self) == expected, "\(ending)")
            } else {
                let error = await expectNetworkError(.connectionClosed) { try await client.send(call) }
                #expect(error?.phase == .receiving, "\(ending): \(String(describing: error))")
            }
        }
        // A HEAD answer has no body, whatever its head says and however the connection closes.
        var head = RawEndpoint(path: "tls-end/\(FaultServer.TLSEnding.closeDelimitedUnclean.rawValue)")
        head.method = .head
        let response = try await client.response(for: head)
        #expect(response.head.status.code == 200)
        #expect(response.value.isEmpty)
        await client.shutdown()
        await server.shutdown()
    }
}
