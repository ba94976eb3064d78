import CCurl
import Courier
import Foundation
import Synchronization

// The poll loop on the engine thread: take commands, drive libcurl, hand finished transfers
// their outcome, fail stalled ones, run task steps, then sleep in `curl_multi_poll`.

extension CurlEngine {
    func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        // Named for the kernel too (`/proc/self/task/*/comm`, `top -H`, the hygiene probe):
        // Foundation's `Thread.name` does not reach it, and the thread would otherwise carry the
        // name of whichever thread started it. Only a name: a failure changes nothing else.
        _ = ccurl_name_this_thread("courier-curl")
        var running: Int32 = 0
        while true {
            // Swapped with an empty array that keeps its capacity: taking the commands allocates nothing.
            var commands = takenCommands
            let accepting = inbox.withLock { inbox in
                swap(&inbox.commands, &commands)
                return inbox.accepting
            }
            for command in commands { handle(command) }
            commands.removeAll(keepingCapacity: true)
            takenCommands = commands
            handleOwnCommands()
            if !accepting, !shuttingDown {
                shuttingDown = true
                for transfer in Array(active.values) { stopNow(transfer, because: Self.shutDownError) }
            }
            if shuttingDown, active.isEmpty, jobs.isEmpty, ownCommands.isEmpty, finishIfIdle() { break }

            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK { failEverything(performed, "curl_multi_perform") }
            drainCompletions()
            flushReadyHeads()
            wakeReaders()
            failStalledTransfers()
            // Tasks that prefer this engine as their executor continue here, after libcurl's
            // callbacks have returned (a step never runs inside one).
            runJobs()

            // With transfers running, wake at least four times a second to check for stalls. With
            // work of its own still waiting, the loop only looks at the sockets and goes on.
            // Shutting down, it goes straight on to check whether it is done.
            let timeout: Int32 = !jobs.isEmpty || !ownCommands.isEmpty || shuttingDown ? 0 : active.isEmpty ? 1000 : 250
            let polled = curl_multi_poll(multi, nil, 0, timeout, nil)
            if polled != CURLM_OK {
                failEverything(polled, "curl_multi_poll")
                Thread.sleep(forTimeInterval: 0.01)  // Never spin on a broken multi handle.
            }
        }
        // From here on, this thread is no longer the engine's: steps and commands go through the
        // inbox, which is closed, so steps go to the global executor.
        threadID.store(0, ordering: .releasing)
        for handle in pool { handle.release() }
        pool.removeAll()
        _ = curl_multi_cleanup(multi)  // Nothing is left to report it to; every transfer has ended.
        let waiters = inbox.withLock { inbox in
            defer { inbox.shutdownWaiters.removeAll() }
            return inbox.shutdownWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Fails every transfer that moved no byte for longer than the stall limit (paused ones are
    /// waiting for their consumer or producer, not for the server). libcurl's own low-speed check
    /// averages over several seconds, so a body that stops after a few bytes would outlive the limit.
    func failStalledTransfers() {
        let now = ContinuousClock.now
        guard now >= nextStallCheck else { return }
        nextStallCheck = now.advanced(by: .milliseconds(200))
        let limit = configuration.stallTimeout
        for transfer in Array(active.values) {
            let stalled = transfer.state.withAttempt { attempt -> Bool in
                guard !attempt.isPaused else { return false }
                guard attempt.activity == attempt.stallWatch.seen else {
                    attempt.stallWatch = (attempt.activity, now)
                    return false
                }
                return attempt.stallWatch.since.duration(to: now) > limit
            }
            guard stalled == true else { continue }
            let error = NetworkError(
                kind: .timedOut, phase: transfer.context.recorder.phase,
                message: "no byte was sent or received for \(limit) (the stall limit)")
            stopNow(transfer, because: error)
        }
    }

    func drainCompletions() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = active[easy]
            else { continue }
            complete(transfer, code: message.pointee.data.result)
        }
    }

    func flushReadyHeads() {
        guard !readyHeads.isEmpty else { return }
        var ready = takenHeads
        swap(&readyHeads, &ready)
        for transfer in ready { flushHead(of: transfer) }
        ready.removeAll(keepingCapacity: true)
        takenHeads = ready
    }

    /// Hands a transfer's ready head to its caller with a streamed body holding the early bytes
    /// (nothing when its head is not ready, or was handed over already). A caller that takes the
    /// body only whole, of an announced length up to `ResponseBody.maxReservation`, gets the head
    /// with the whole body at its end instead: one wakeup when the server writes the head and the
    /// body apart.
    func flushHead(of transfer: CurlTransfer, holding holds: Bool = true) {
        let highWater = configuration.responseBufferBytes
        let holding = holds && transfer.gathersBody ? ResponseBody.maxReservation : nil
        let action = transfer.state.flush(holdingWholeUpTo: holding) { early, paused, announced in
            CurlBodyBuffer(
                highWater: highWater, transfer: transfer, first: early, paused: paused,
                remaining: announced.map { Int(clamping: $0) - early.count } ?? 0, gathers: transfer.gathersBody)
        }
        apply(action, to: transfer)
    }

    /// Wakes the body readers that waited for bytes which arrived in this round (one wakeup per
    /// body per round, however many pieces libcurl wrote).
    func wakeReaders() {
        guard !readersToWake.isEmpty else { return }
        var due = takenReaders
        swap(&readersToWake, &due)
        for buffer in due { buffer.wakeReader() }
        due.removeAll(keepingCapacity: true)
        takenReaders = due
    }

    /// libcurl reported the transfer done with `code`.
    func complete(_ transfer: CurlTransfer, code: CURLcode) {
        if code != CURLE_OK, transfer.mayResend(after: code) {
            resend(transfer, after: code)
            return
        }
        var failure: NetworkError?
        // One read of libcurl's counters serves both the metrics and the error's phase.
        let reading = record(transfer)
        var cutAfterHead = false
        if code != CURLE_OK {
            var progress = reading?.progress ?? .init()
            progress.headComplete = transfer.state.hasFinalHead
            failure = transfer.state.withAttempt { attempt in
                if let decided = attempt.failure ?? proxyRefusal(attempt.easy, transfer) { return decided }
                cutAfterHead = progress.headComplete
                return CurlErrorMapping.error(code: code, message: attempt.errorMessage, progress: progress)
            }
        } else if let unproven = transfer.unprovenEnd {
            failure = unproven
        }
        // The head, the body's first bytes and the connection's end can come in one round: the
        // caller gets the head and those bytes, then the failure (a download resumes from them),
        // as when the end comes a round later, instead of the failure alone.
        // (The cheap tests first: a call that ends well reads nothing more here.)
        if cutAfterHead || (failure != nil && transfer.holdsHead), transfer.state.phase == .headReady {
            flushHead(of: transfer, holding: false)
        }
        apply(transfer.state.completed(failure, handleFailed: code != CURLE_OK), to: transfer)
    }

    /// Stops a transfer now, on the engine thread: its metrics are recorded while it still has
    /// its handle, then the caller or the body reader gets `error`.
    func stopNow(_ transfer: CurlTransfer, because error: NetworkError) {
        record(transfer)
        // A head held for its whole body goes first: the caller hears the stop from the body.
        if transfer.state.phase == .headReady, transfer.holdsHead { flushHead(of: transfer, holding: false) }
        apply(transfer.state.stop(error), to: transfer)
    }

    /// Performs what a transition decided, releasing the attempt it gave up before anyone hears.
    func apply(_ action: consuming CurlTransferState.Action, to transfer: CurlTransfer) {
        switch consume action {
        case .none:
            break
        case .attach(let waiter):
            attach(transfer, waiter)
        case .failCaller(let waiter, let error, let attempt):
            if let attempt { release(attempt) }
            waiter.resume(throwing: error)
        case .deliverWhole(let waiter, let head, let data, let attempt):
            release(attempt)
            waiter.resume(returning: TransportResponse(head: head, body: ResponseBody(data: data)))
        case .deliverStream(let waiter, let head, let buffer, let expected):
            // Pulled chunk by chunk on the reader's executor: an AsyncThrowingStream(unfolding:)
            // cost about nine executor switches per 16 KiB chunk.
            let body = ResponseBody(source: CurlBodyReader(buffer: buffer), expectedLength: expected)
            waiter.resume(returning: TransportResponse(head: head, body: body))
        case .endBody(let buffer, let end, let attempt):
            buffer.releaseTransfer()
            release(attempt)
            buffer.finish(end)
        }
    }

    /// A multi-handle failure leaves no transfer in a known state: fail them all.
    func failEverything(_ code: CURLMcode, _ call: String) {
        let text = String(cString: curl_multi_strerror(code))
        let error = NetworkError(
            kind: .transportFailure, phase: .transfer, message: "\(call) failed: \(text)",
            nativeCode: .init(domain: "CURLMcode", code: Int(code.rawValue)))
        for transfer in Array(active.values) { stopNow(transfer, because: error) }
    }
}
