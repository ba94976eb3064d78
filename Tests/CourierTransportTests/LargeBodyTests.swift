import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// 64 MiB each way through every transport, streamed: every byte moves, intact and in order (a
/// CRC-32 of a known pattern, checked end to end), and the process that
/// moves them grows by far less than the body. Each transfer runs in a process of its own
/// (`CourierMemoryProbe`), because this test process's memory moves with every test beside it.
@Suite("64 MiB both ways with bounded memory", .serialized, .timeLimit(.minutes(20)))
struct LargeBodyTests {
    /// 64 MiB; `COURIER_STREAM_BYTES` sets another size (`scripts/longstream.sh` runs 1 GiB).
    static let bytes = ProcessInfo.processInfo.environment["COURIER_STREAM_BYTES"].flatMap { Int($0) } ?? 64 << 20
    /// A transport that held the body would grow by at least 64 MiB. (Measured on the 2-core VM:
    /// downloads 0-1 MiB for curl and ahc; uploads 0-16 MiB for curl and URLSession. ahc's uploads
    /// run ahead of a late pause (`ConformanceTransport.UploadBackpressure.pausedLate`): 12-48 MiB
    /// alone, 50-53 MiB beside a full test run, held only to less than the body.) `COURIER_STREAM_ALLOWANCE_MIB` sets
    /// another bound (`scripts/longstream.sh`: 32 MiB for 1 GiB).
    static let allowance = (ProcessInfo.processInfo.environment["COURIER_STREAM_ALLOWANCE_MIB"].flatMap { Int($0) } ?? 48) << 20
    /// The bound of an upload whose transport pauses it late (`UploadBackpressure.pausedLate`):
    /// 96 MiB whatever the body's size (ahc measured 12-48 MiB alone, 50-53 MiB beside a full run,
    /// for 64 MiB); `COURIER_STREAM_LATE_ALLOWANCE_MIB` sets another.
    static let lateAllowance =
        (ProcessInfo.processInfo.environment["COURIER_STREAM_LATE_ALLOWANCE_MIB"].flatMap { Int($0) } ?? 96) << 20

    static func probe() throws -> String {
        try #require(
            ChildProcess.sibling(named: "CourierMemoryProbe"),
            "build CourierMemoryProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
    }

    struct Measurement: Decodable {
        var moved: Int
        var intact: Bool
        var baseline: Int
        var peak: Int
    }

    /// `down` and `up`: the transport and a file body; `stream-…`: `NetworkClient.stream` and a
    /// producer's stream (`RequestBody.stream` over the file); `openapi-…`: the generated
    /// InventoryClient over CourierClientTransport.
    static let directions = ["down", "up", "stream-down", "stream-up", "openapi-down", "openapi-up"]

    @Test("every byte moves; the process grows by far less than the body", arguments: ConformanceTransport.all, directions)
    func largeBody(conformance: ConformanceTransport, direction: String) async throws {
        let transport = conformance.name
        try await withServer { server in
            let outcome = try await ChildProcess.run(
                try Self.probe(), [transport, direction, server.baseURL, String(Self.bytes)], timeout: .seconds(600))
            try #require(outcome.status == 0 && !outcome.timedOut, "probe failed: \(outcome.errors)")
            let measurement = try JSONDecoder().decode(Measurement.self, from: Data(outcome.output.utf8))
            #expect(measurement.moved == Self.bytes)
            #expect(measurement.intact, "\(transport) \(direction): the bytes that arrived are not the bytes sent")
            let grown = measurement.peak - measurement.baseline
            print(
                "\(transport) \(direction): \(measurement.moved >> 20) MiB moved, intact: \(measurement.intact), grew by \(grown >> 20) MiB"
            )
            if direction.hasSuffix("down"), conformance.downloadBackpressure == .none {
                // Declared: the body is buffered ahead of a slow consumer, up to the read-ahead the
                // probe gives it (the body's size). Nothing to bound; `longLine` checks that the
                // default read-ahead bounds it.
                return
            }
            if direction.hasSuffix("up"), conformance.uploadBackpressure == .pausedLate {
                // Declared: the body runs ahead of a late pause, by at most a fixed amount whatever
                // its size, and it is never held whole.
                let bound = min(Self.lateAllowance, Self.bytes)
                #expect(grown < bound, "\(transport) \(direction): grew by \(grown >> 20) MiB moving \(Self.bytes >> 20) MiB")
                return
            }
            #expect(grown < Self.allowance, "\(transport) \(direction): grew by \(grown >> 20) MiB moving \(Self.bytes >> 20) MiB")
        }
    }

    /// A JSON Lines body of one 64 MiB line fails on the line cap (1 MiB) as `invalid_response`,
    /// and the process grows by far less than the line: curl and ahc pause the transfer, and
    /// URLSession, which cannot, stops it once its read-ahead is full.
    @Test(
        "a line far past the JSON Lines cap fails as invalid_response, holding far less than the line", arguments: ConformanceTransport.all)
    func longLine(conformance: ConformanceTransport) async throws {
        try await withServer { server in
            let outcome = try await ChildProcess.run(
                try Self.probe(), [conformance.name, "long-line", server.baseURL, String(Self.bytes)], timeout: .seconds(600))
            try #require(outcome.status == 0 && !outcome.timedOut, "probe failed: \(outcome.errors)")
            let measurement = try JSONDecoder().decode(Measurement.self, from: Data(outcome.output.utf8))
            #expect(measurement.intact)
            let grown = measurement.peak - measurement.baseline
            print("\(conformance.name) long-line: grew by \(grown >> 20) MiB for a \(Self.bytes >> 20) MiB line")
            #expect(grown < Self.allowance, "\(conformance.name): grew by \(grown >> 20) MiB for a \(Self.bytes >> 20) MiB line")
        }
    }
}
