import Courier
import CourierConformance
import CourierResilience
import CourierTestServer
import Testing

/// The conformance cases whose limits are socket-level, so they run on the real clock: the stall
/// limit, the connect timeout, how fast cancellation and `shutdown()` take effect. (The deadline
/// and every wait in the core are on the injected clock, and their cases move a manual one.)
///
/// One case at a time, in a child process of their own (``IsolatedSuiteTests``): with the whole
/// suite beside them in one process on two cores, a CPU-heavy case (a decompression bomb, 64 MiB
/// bodies) can hold Swift's cooperative pool, and so a transport's reader, for seconds, which is
/// a real stall as far as the socket is concerned.
@Suite(
    "Conformance on the real clock: stall and connect limits, cancellation, shutdown", .serialized, .timeLimit(.minutes(5)),
    .enabled(
        if: IsolatedSuite.realClock.runsHere,
        "runs in a child process of its own (IsolatedSuiteTests); alone: COURIER_DEVELOPMENT=1 COURIER_ISOLATED_SUITE=ConformanceRealClockTests swift test --filter ConformanceRealClockTests"
    ))
struct ConformanceRealClockTests {
    // Two cases whose answer comes within milliseconds but whose limit is a real-clock deadline:
    // in a plain `swift test` beside every other suite, the ahc variants outlived it (the
    // refusal, and the hedge's copy, reached the call only after its 10 s deadline).
    @Test("connection refused is a connect failure", arguments: ConformanceTransport.all)
    func connectionRefused(transport: ConformanceTransport) async throws {
        try await ConformanceCases.connectionRefused(transport)
    }

    @Test("hedging: a held call gets a copy whose answer wins, and the held request is cancelled", arguments: ConformanceTransport.all)
    func hedging(transport: ConformanceTransport) async throws {
        try await ConformanceCases.hedging(transport)
    }

    @Test(
        "cancelling ends the call at once in every phase, and the server sees the connection closed",
        arguments: ConformanceTransport.all, CancelPhase.allCases)
    func cancelInPhase(transport: ConformanceTransport, phase: CancelPhase) async throws {
        try await ConformanceCases.cancelInPhase(transport, phase: phase)
    }

    @Test("a body that stops for longer than the stall limit times out while receiving", arguments: ConformanceTransport.all)
    func stall(transport: ConformanceTransport) async throws {
        try await ConformanceCases.stall(transport)
    }

    @Test(
        "a download that keeps receiving outlives the request timeout; one whose server stops fails at the stall limit",
        arguments: ConformanceTransport.all)
    func longTransfer(transport: ConformanceTransport) async throws {
        try await ConformanceCases.longTransferOutlivesTheRequestTimeout(transport)
    }

    @Test("a slow but steady body is not a stall", arguments: ConformanceTransport.all)
    func steadyBodyIsNotAStall(transport: ConformanceTransport) async throws {
        try await ConformanceCases.steadyBodyIsNotAStall(transport)
    }

    @Test("a host that never accepts times out at the connect timeout", arguments: ConformanceTransport.all)
    func connectTimeout(transport: ConformanceTransport) async throws {
        try await ConformanceCases.connectTimeout(transport)
    }

    @Test(
        "the deadline ends a connection attempt with the call: shutdown() returns promptly afterwards",
        arguments: ConformanceTransport.all)
    func deadlineThroughShutdown(transport: ConformanceTransport) async throws {
        try await ConformanceCases.deadlineThroughShutdown(transport)
    }
}
