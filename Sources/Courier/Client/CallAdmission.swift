/// Which calls a client still takes, and the ones running: what a graceful shutdown waits for and,
/// when its grace period runs out, ends.
///
/// A call is running from the start of its network part (queue waiting included) to the end of
/// its body. Entering and leaving cost one lock each: a slot in an array reused through a free
/// list, with no hashing and no allocation once the array has grown to the most calls ever
/// running at once.
final class CallAdmission: Sendable {
    private struct State {
        var closed = false
        /// The running calls' deadlines (`nil`: a free slot), to end them when the grace period
        /// runs out.
        var running: [CallDeadline?] = []
        var free: [Int] = []
        var count = 0
        /// Shutdowns waiting for the running calls to leave.
        var drainers: [CheckedContinuation<Void, Never>] = []

        mutating func takeDrainersIfDrained() -> [CheckedContinuation<Void, Never>] {
            guard closed, count == 0, !drainers.isEmpty else { return [] }
            defer { drainers = [] }
            return drainers
        }
    }

    private let state = Locked(State())

    /// Counts a call in, with the signal that ends it; `nil` once the client is closed.
    func enter(_ signal: CallDeadline) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.count += 1
            if let slot = state.free.popLast() {
                state.running[slot] = signal
                return slot
            }
            state.running.append(signal)
            return state.running.count - 1
        }
    }

    /// Counts a call out.
    func leave(_ slot: Int) {
        let drainers = state.withLock { state in
            state.running[slot] = nil
            state.free.append(slot)
            state.count -= 1
            return state.takeDrainersIfDrained()
        }
        for drainer in drainers { drainer.resume() }
    }

    /// Whether the client still takes calls.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Stops taking calls, then waits until every running call has left. When `gracePeriod` on
    /// `time` passes first, the calls still running are ended (they fail as
    /// ``NetworkError/Kind/shutDown``), and it returns once they have left.
    func close(gracePeriod: Duration, on time: any TimeSource) async {
        let alreadyDrained = state.withLock { state in
            state.closed = true
            return state.count == 0
        }
        guard !alreadyDrained else { return }
        let alarm = time.schedule(at: time.now.advanced(by: max(.zero, gracePeriod))) { [self] in endRunning() }
        await withCheckedContinuation { (drainer: CheckedContinuation<Void, Never>) in
            let drained = state.withLock { state in
                guard state.count > 0 else { return true }
                state.drainers.append(drainer)
                return false
            }
            if drained { drainer.resume() }
        }
        time.cancelAlarm(alarm)
    }

    /// Ends every running call, as its deadline would, but reported as ended by the shutdown.
    private func endRunning() {
        let signals = state.withLock { $0.running.compactMap { $0 } }
        for signal in signals { signal.pass(byShutdown: true) }
    }
}
