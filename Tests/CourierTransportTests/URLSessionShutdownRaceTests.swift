import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// FoundationNetworking traps (`Session invalidated`) when a task is made on an invalidated
/// session. The URLSession transport makes every task under the lock `shutdown()` takes the session
/// from: a thousand rounds of calls racing `shutdown()`, in a child process (a trap would end it),
/// all end, and nothing traps.
@Suite("URLSession: calls racing shutdown")
struct URLSessionShutdownRaceTests {
    @Test("1,000 rounds of four calls racing shutdown() end without a trap")
    func racesShutdown() async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierURLSessionProbe"),
            "build CourierURLSessionProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        // A temporary directory of its own: the staged bodies it counts are the probe's alone.
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("courier-race-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        try await withServer { server in
            let outcome = try await ChildProcess.run(
                probe, ["--shutdown-race", server.baseURL, "1000"], environment: ["TMPDIR": temporary.path], timeout: .seconds(300))
            #expect(outcome.status == 0 && !outcome.timedOut, "status \(outcome.status): \(outcome.errors.suffix(2000))")
            #expect(outcome.output.contains("raced 1000"), "\(outcome.output.suffix(500))")
            #expect(outcome.output.contains("staged-left 0"), "staged request bodies were left behind: \(outcome.output.suffix(500))")
            #expect(!outcome.errors.contains("Session invalidated"))
            #expect(!outcome.output.contains("foreign"), "a call ended with an error that is not a NetworkError: \(outcome.output)")
        }
    }
}
