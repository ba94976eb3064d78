import CCurl
import Courier
import Foundation

// Commands from any thread: the locked inbox, the engine thread's own commands, and the
// wake-up of the loop (`curl_multi_wakeup`, only ever under the inbox lock).

extension CurlEngine {
    /// Hands a transfer to the engine with the caller waiting for its head. Fails the caller at
    /// once when the engine is shutting down (the engine then never had the continuation, so
    /// nothing else resumes it).
    func submit(_ transfer: CurlTransfer, waiter: CurlHeadWaiter) {
        if !post(.start(transfer, waiter), requireAccepting: true) {
            waiter.resume(throwing: Self.shutDownError)
        }
    }

    /// Stops a transfer in whatever phase it is; does nothing once it has finished.
    func stop(_ transfer: CurlTransfer, because error: NetworkError) {
        post(.stop(transfer, error), requireAccepting: false)
    }

    /// Lets a transfer paused for backpressure read again.
    func resume(_ transfer: CurlTransfer) {
        post(.resume(transfer), requireAccepting: false)
    }

    /// Lets a transfer whose streamed body had no bytes ready send again.
    func resumeUpload(_ transfer: CurlTransfer) {
        post(.resumeUpload(transfer), requireAccepting: false)
    }

    /// Refuses new transfers, stops those in flight, and returns once the thread's loop has ended
    /// and every libcurl handle is released (the thread resumes the caller as its last act, then
    /// ends). Safe to call more than once.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyStopped: Bool = inbox.withLock { inbox in
                if inbox.stopped { return true }
                inbox.accepting = false
                inbox.shutdownWaiters.append(continuation)
                _ = curl_multi_wakeup(multi)  // The loop re-checks `accepting` even if this fails.
                return false
            }
            if alreadyStopped { continuation.resume() }
        }
    }

    /// Begins shutdown without waiting (for `deinit` of the transport).
    func beginShutdown() {
        post(nil, requireAccepting: false)
    }

    @discardableResult
    func post(_ command: Command?, requireAccepting: Bool) -> Bool {
        // A task running on the engine thread hands its command over directly: the loop takes
        // `ownCommands` before it polls again. (A start during shutdown is refused when taken.)
        if let command, isEngineThread {
            ownCommands.append(command)
            return true
        }
        return inbox.withLock { inbox in
            guard !inbox.stopped, inbox.accepting || !requireAccepting else { return false }
            if command == nil { inbox.accepting = false }
            let wasEmpty = inbox.commands.isEmpty
            if let command { inbox.commands.append(command) }
            // Wake the loop only when the inbox turns non-empty: a loop that already has commands
            // to take will take this one too. Under the lock, so the handle cannot be gone.
            if wasEmpty || command == nil { _ = curl_multi_wakeup(multi) }
            return true
        }
    }

    /// Marks the engine stopped if no command arrived meanwhile. Under the inbox lock, so no
    /// wakeup can be issued once this returns true.
    func finishIfIdle() -> Bool {
        inbox.withLock { inbox in
            guard inbox.commands.isEmpty else { return false }
            inbox.stopped = true
            return true
        }
    }

    /// Handles the commands tasks on the engine thread gave, including those they give meanwhile.
    func handleOwnCommands() {
        while !ownCommands.isEmpty {
            var commands = takenOwnCommands
            swap(&ownCommands, &commands)
            for command in commands { handle(command) }
            commands.removeAll(keepingCapacity: true)
            takenOwnCommands = commands
        }
    }

    func handle(_ command: Command) {
        switch command {
        case .run(let job):
            jobs.append(job)
        case .start(let transfer, let waiter):
            apply(transfer.state.start(waiter, refusal: shuttingDown ? Self.shutDownError : nil), to: transfer)
        case .stop(let transfer, let error):
            stopNow(transfer, because: error)
        case .resume(let transfer):
            let resumed = transfer.state.withAttempt { attempt -> (UnsafeMutableRawPointer, Int32)? in
                guard attempt.receivePaused else { return nil }
                attempt.receivePaused = false
                attempt.restartStallWatch()
                return (attempt.easy, attempt.pauseMask)
            }
            guard let (easy, mask) = resumed ?? nil else { return }
            counters.withLock { $0.resumes += 1 }
            unpause(transfer, easy, mask: mask)
        case .resumeUpload(let transfer):
            let resumed = transfer.state.withAttempt { attempt -> (UnsafeMutableRawPointer, Int32)? in
                guard attempt.upload.unpause() else { return nil }
                attempt.restartStallWatch()
                return (attempt.easy, attempt.pauseMask)
            }
            guard let (easy, mask) = resumed ?? nil else { return }
            unpause(transfer, easy, mask: mask)
        }
    }

    /// Sets the transfer's pause state to what is still paused (receiving for backpressure,
    /// sending for a producer that has nothing yet); failing the transfer if libcurl refuses.
    /// Outside any transition: `curl_easy_pause` hands libcurl's held bytes to the write callback
    /// at once, which changes the state itself.
    /// - Parameter mask: What stays paused (``CurlAttempt/pauseMask``, read in the same transition).
    private func unpause(_ transfer: CurlTransfer, _ easy: UnsafeMutableRawPointer, mask: Int32) {
        let code = curl_easy_pause(easy, mask)
        guard code != CURLE_OK else { return }
        // When the write callback refused the held bytes (the size limit), its own failure says why.
        let progress = progress(of: transfer)
        let error =
            transfer.state.withAttempt { attempt in
                attempt.failure ?? CurlErrorMapping.error(code: code, message: attempt.errorMessage, progress: progress)
            } ?? CurlErrorMapping.error(code: code, message: "", progress: progress)
        stopNow(transfer, because: error)
    }
}
