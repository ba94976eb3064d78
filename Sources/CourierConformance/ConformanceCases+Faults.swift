import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension ConformanceCases {
    /// What a transport must report for a fault: the same ``NetworkError/Kind`` and phase on
    /// every transport (`nil` for interim responses, which must be skipped), except where the
    /// transport declares it cannot skip a `1xx` response.
    public static func expectedFailure(
        for fault: FaultServer.Fault, on transport: ConformanceTransport
    ) -> (kind: NetworkError.Kind, phase: NetworkError.Phase)? {
        switch fault {
        case .resetMidBody, .truncatedBody: (.connectionClosed, .receiving)
        case .closedWithoutResponse: (.connectionClosed, .awaitingResponse)
        case .malformedStatusLine, .conflictingContentLength: (.invalidResponse, .awaitingResponse)
        case .continueResponse, .earlyHints: transport.interimResponses == .refused ? (.unsupported, .awaitingResponse) : nil
        case .headWithoutBlankLine, .bareCRInHeader, .spaceBeforeColon, .nulInHeader, .controlCharacterInHeader, .invalidFieldName,
            .tooManyHeaders, .oversizedHead, .hugeContentLength:
            (.invalidResponse, .awaitingResponse)
        case .endlessInterim:
            switch transport.interimResponses {
            case .skipped: (.invalidResponse, .awaitingResponse)
            case .skippedUnseen: nil
            case .refused: (.unsupported, .awaitingResponse)
            }
        case .endlessBody: (.responseTooLarge, .receiving)
        case .redirectToMappedIPv6, .trailers: nil
        }
    }

    /// A server that misbehaves: each fault gives the same error kind and phase on every
    /// transport; 1xx interim responses before the final one are skipped.
    public static func fault(_ transport: ConformanceTransport, fault: FaultServer.Fault) async throws {
        let server = try await FaultServer.start()
        // The deadline is on a clock that never moves: no fault may end as a timeout, however busy
        // the machine (the transports' own backstop is the 60 s still left on it).
        let client = try transport.makeClient(baseURL: server.baseURL) {
            $0.requestTimeout = .seconds(60)
            $0.timeSource = ManualTimeSource()
        }
        let call = RawEndpoint(path: "fault/\(fault.rawValue)")
        if fault == .redirectToMappedIPv6 {
            // The follow-up link sends the hop to the IPv6-mapped loopback address: it arrives
            // where the machine has IPv6, and fails to connect where it has none. Never a crash.
            do {
                let response = try await client.send(call)
                #expect(String(decoding: response, as: UTF8.self) == "ok")
            } catch let error as NetworkError {
                #expect(error.kind == .connectFailure, "\(error)")
            }
        } else if let (kind, phase) = expectedFailure(for: fault, on: transport) {
            let error = await expectNetworkError(kind) { try await client.send(call) }
            #expect(error?.phase == phase, "\(fault): \(String(describing: error))")
        } else {
            let response = try await client.response(for: call)
            #expect(response.head.status.code == 200)
            #expect(String(decoding: response.value, as: UTF8.self) == "final")
            // Trailer fields come after the body: they never join the head.
            #expect(!response.head.headerFields.contains { $0.name.canonicalName == "x-checksum" }, "\(fault)")
        }
        await client.shutdown()
        await server.shutdown()
    }

    /// A body cut off in the same write as its head (the head, 1,000 of the 100,000 bytes it
    /// promised, then a close): a streamed reader gets the head and the bytes that came, then
    /// `connection_closed` while receiving, on every transport, however the transport's reads fall
    /// (a download resumes from those bytes; it must not get the failure alone).
    public static func cutWithItsHead(_ transport: ConformanceTransport) async throws {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) {
            $0.requestTimeout = .seconds(60)
            $0.timeSource = ManualTimeSource()
        }
        for _ in 0..<5 {
            let response = try await client.stream(RawEndpoint(path: "fault/\(FaultServer.Fault.truncatedBody.rawValue)"))
            #expect(response.head.status.code == 200)
            var received = 0
            let error = await expectNetworkError(.connectionClosed) {
                for try await chunk in response.body { received += chunk.count }
            }
            #expect(error?.phase == .receiving, "\(String(describing: error))")
            #expect(received == 1000, "the bytes that came before the cut reach the reader")
        }
        await client.shutdown()
        await server.shutdown()
    }
}
