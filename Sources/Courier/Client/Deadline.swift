/// The one mechanism that ends a call at its deadline, for every transport alike.
///
/// The client runs every call's chain under it: queue waiting, every attempt and redirect hop,
/// retry backoff and the body read. When the deadline passes first, the work under the call is
/// cancelled (transports stop their transfer, including a connection attempt still under way)
/// and the call fails as ``NetworkError/Kind/timedOut`` in the phase it had reached. Transports
/// also receive the time left (``RequestContext/remaining``) to hand to their library as a
/// backstop, but they decide nothing about the deadline.
enum Deadline {
    /// Runs `operation`; if `deadline` shows on `clock` first, cancels it, waits for it to stop,
    /// and throws ``NetworkError/Kind/timedOut`` in the phase the recorder shows.
    ///
    /// Cancellation of the calling task cancels `operation` and surfaces as
    /// ``NetworkError/Kind/cancelled``.
    static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        on clock: any TimeSource,
        timeout: Duration,
        recorder: TransferRecorder,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                _ = await clock.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                if Task.isCancelled { throw NetworkError.cancelled(phase: recorder.phase) }
                throw NetworkError(kind: .timedOut, phase: recorder.phase, message: "the call did not finish within \(timeout)")
            }
            return value
        }
    }
}
