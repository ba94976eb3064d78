import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// 64 MiB each way through every transport, streamed: every byte moves, and the process that
/// moves them grows by far less than the body. Each transfer runs in a process of its own
/// (`CourierMemoryProbe`), because this test process's memory moves with every test beside it.
@Suite("64 MiB both ways with bounded memory", .serialized, .timeLimit(.minutes(3)))
struct LargeBodyTests {
    static let bytes = 64 << 20
    /// A transport that held the body would grow by at least 64 MiB. (Measured on the 2-core VM:
    /// downloads 0-1 MiB for curl and ahc; uploads about 16 MiB for curl and URLSession and
    /// 21-42 MiB for ahc, the same at 128 MiB, so bounded.)
    static let allowance = 48 << 20

    static func probe() throws -> String {
        try #require(ChildProcess.sibling(named: "CourierMemoryProbe"), "build CourierMemoryProbe first: swift build --build-tests")
    }

    struct Measurement: Decodable {
        var moved: Int
        var baseline: Int
        var peak: Int
    }

    @Test("every byte moves; the process grows by far less than the body", arguments: ConformanceTransport.all, ["down", "up"])
    func largeBody(conformance: ConformanceTransport, direction: String) async throws {
        let transport = conformance.name
        try await withServer { server in
            let outcome = try await ChildProcess.run(
                try Self.probe(), [transport, direction, server.baseURL, String(Self.bytes)], timeout: .seconds(90))
            try #require(outcome.status == 0 && !outcome.timedOut, "probe failed: \(outcome.errors)")
            let measurement = try JSONDecoder().decode(Measurement.self, from: Data(outcome.output.utf8))
            if direction == "down" {
                #expect(measurement.moved == Self.bytes)
            } else {
                #expect(measurement.moved > Self.bytes, "the multipart body wraps the 64 MiB file part")
            }
            let grown = measurement.peak - measurement.baseline
            if direction == "down", conformance.downloadBackpressure == .none {
                // Declared: the body is buffered ahead of a slow consumer. Nothing to bound.
                return
            }
            #expect(grown < Self.allowance, "\(transport) \(direction): grew by \(grown >> 20) MiB moving \(Self.bytes >> 20) MiB")
        }
    }
}
