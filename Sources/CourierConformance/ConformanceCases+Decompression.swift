import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

extension ConformanceCases {
    /// What a transport must do with an encoded body: decode the valid ones (the head then has
    /// no `Content-Encoding`), and fail the rest with the same kind on every transport.
    public static func expectedOutcome(for encoded: FaultServer.Encoded) -> NetworkError.Kind? {
        switch encoded {
        case .gzip, .deflate, .rawDeflate, .doubleGzip: nil
        case .bomb, .chunkedBomb: .responseTooLarge
        case .truncated, .corrupt, .unknown, .chained: .decoding
        }
    }

    /// Requests advertise gzip; valid bodies arrive decoded; a bomb, a truncated or corrupt
    /// stream, an unknown coding and six chained codings fail, never as success.
    public static func decompression(_ transport: ConformanceTransport, encoded: FaultServer.Encoded) async throws {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) { $0.requestTimeout = .seconds(20) }
        let call = RawEndpoint(path: "coding/\(encoded.rawValue)")
        if encoded == .truncated, !transport.detectsTruncatedCoding {
            // Declared: the library decodes and ends the body quietly; the call gets a part.
            let data = try await client.send(call)
            #expect(data.count < FaultServer.decodedText.utf8.count)
        } else if let kind = expectedOutcome(for: encoded) {
            let error = await expectNetworkError(kind) { try await client.send(call) }
            #expect(error?.phase == .receiving, "\(encoded): \(String(describing: error))")
        } else {
            let response = try await client.response(for: call)
            #expect(response.head.headerFields[HTTPField.Name("x-advertised")!] == "yes")
            #expect(response.head.headerFields[.contentEncoding] == nil)
            #expect(response.value.count == FaultServer.decodedText.utf8.count)
            #expect(String(decoding: response.value, as: UTF8.self) == FaultServer.decodedText)
        }
        await client.shutdown()
        await server.shutdown()
    }

    /// With the body cap raised past the bomb's size, the ratio limit stops it: 32 MiB from about
    /// 32 KB is a ratio of about 1,000, with a `Content-Length` or chunked without one.
    public static func decompressionRatio(_ transport: ConformanceTransport) async throws {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) { configuration in
            configuration.requestTimeout = .seconds(20)
            configuration.maxResponseBytes = 2 * FaultServer.bombBytes
        }
        // Announced (Content-Length), and chunked with no length: measured against the about
        // 32 KB of gzip, never none.
        for bomb in [FaultServer.Encoded.bomb, .chunkedBomb] {
            let call = RawEndpoint(path: "coding/\(bomb)")
            guard bomb == .bomb || transport.checksRatioWithoutLength else {
                // Declared: held to the cap alone (raised here past the bomb), so it decodes whole.
                #expect(try await client.send(call).count == FaultServer.bombBytes)
                continue
            }
            let error = await expectNetworkError(.responseTooLarge) { try await client.send(call) }
            let words = error?.message.split(separator: " ") ?? []
            let counted = words.firstIndex(of: "times").flatMap { words.count > $0 + 2 ? Int(words[$0 + 2]) : nil }
            #expect(
                error?.message.contains("100 times") == true && counted.map { $0 > 0 && $0 <= 64 << 10 } == true,
                "\(bomb): \(String(describing: error))")
        }
        await client.shutdown()
        await server.shutdown()
    }

    /// A chunked gzip body with no length that decodes to 8 MiB at a ratio of about 2 is whole on
    /// every transport, also when the reader starts only after the transfer has ended (the count
    /// of bytes received outlives the transfer).
    public static func decompressionUnannounced(_ transport: ConformanceTransport) async throws {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) { configuration in
            configuration.requestTimeout = .seconds(30)
        }
        let response = try await client.stream(RawEndpoint(path: "chunked-text"))
        try await Task.sleep(for: .milliseconds(300))  // the transfer ends first (not a wait for a timeout)
        var decoded = 0
        for try await chunk in response.body { decoded += chunk.count }
        #expect(decoded == FaultServer.chunkedTextBytes)
        await client.shutdown()
        await server.shutdown()
    }

    /// A call that sets its own `Accept-Encoding` gets the bytes as sent, `Content-Encoding` kept
    /// (a transport whose library always decodes gets them decoded: declared).
    public static func decompressionOptOut(_ transport: ConformanceTransport) async throws {
        let server = try await FaultServer.start()
        let client = try transport.makeClient(baseURL: server.baseURL) { $0.requestTimeout = .seconds(20) }
        let call = RawEndpoint(path: "coding/gzip", headers: ["Accept-Encoding": "gzip"])
        let response = try await client.response(for: call)
        if transport.alwaysDecodes {
            #expect(String(decoding: response.value, as: UTF8.self) == FaultServer.decodedText)
        } else {
            #expect(response.head.headerFields[.contentEncoding] == "gzip")
            #expect(Array(response.value) == FaultServer.gzippedText)
        }
        await client.shutdown()
        await server.shutdown()
    }
}
