/// Runs a call's network part under its deadline, for every transport alike.
enum Deadline {
    /// Runs `operation`; if `deadline` passes first, cancels it and throws
    /// ``NetworkError/Kind/timedOut`` in the phase the recorder shows.
    ///
    /// Cancellation of the calling task cancels `operation` and surfaces as
    /// ``NetworkError/Kind/cancelled``. The timer is the shared ``DeadlineWatch``, not a system
    /// timer per call.
    static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        timeout: Duration,
        recorder: TransferRecorder,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                _ = await DeadlineWatch.shared.sleep(until: deadline)
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
