import CourierConformance
import CourierTestServer
import Foundation
import Testing

/// Three server behaviours crash any process that uses URLSession on Linux, inside FoundationNetworking
/// where Courier cannot catch them (README and `URLSessionTransport` say so). Each runs here in a
/// child process (`CourierURLSessionProbe`), which must still die with the toolchain's message:
/// the day a toolchain fixes one, this test fails, and the note and the
/// `ConformanceTransport.crashesInToolchain` declaration can go.
@Suite("URLSession: faults that crash FoundationNetworking")
struct URLSessionCrashTests {
    static let cases: [(FaultServer.Fault, String)] = [
        (.headWithoutBlankLine, "Transfer completed, but there's no response"),
        (.redirectToMappedIPv6, "Invalid URL"),
        (.trailers, "Transfer completed, but there's no response"),
    ]

    @Test("each still crashes the process in FoundationNetworking, with its own message", arguments: cases)
    func stillCrashes(fault: FaultServer.Fault, message: String) async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierURLSessionProbe"),
            "build CourierURLSessionProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        let server = try await FaultServer.start()
        let outcome = try await ChildProcess.run(probe, ["\(server.baseURL)/fault/\(fault.rawValue)"], timeout: .seconds(30))
        await server.shutdown()
        #expect(!outcome.timedOut)
        #expect(
            outcome.status != 0 && outcome.errors.contains(message),
            """
            FoundationNetworking no longer crashes on \(fault) (status \(outcome.status), printed \(outcome.output)): \
            remove it from the README's note, URLSessionTransport's documentation and ConformanceTransport.crashesInToolchain. \
            stderr: \(outcome.errors.prefix(2000))
            """)
    }

    /// 10,000 header lines: FoundationNetworking parses them in quadratic time (about 2.7 s of
    /// CPU on this machine) on the one queue it does all its work on for every session in the
    /// process; Courier then refuses the head, or, on a machine so busy that the parse outlasts the
    /// probe's 10 s deadline, the deadline ends the call. In a child process, so the wait holds up
    /// no other case; the process and the call still end, once and typed.
    @Test("10,000 header lines are refused as an invalid response (in a child: they hold FoundationNetworking's queue)")
    func tooManyHeaders() async throws {
        let probe = try #require(
            ChildProcess.sibling(named: "CourierURLSessionProbe"),
            "build CourierURLSessionProbe first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        let server = try await FaultServer.start()
        let outcome = try await ChildProcess.run(
            probe, ["\(server.baseURL)/fault/\(FaultServer.Fault.tooManyHeaders.rawValue)"], timeout: .seconds(120))
        await server.shutdown()
        #expect(!outcome.timedOut)
        #expect(outcome.status == 0, "\(outcome.errors.prefix(2000))")
        #expect(
            outcome.output.contains("failed: NetworkError.invalid_response") || outcome.output.contains("failed: NetworkError.timed_out"),
            "\(outcome.output)")
    }
}
