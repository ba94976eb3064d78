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
                for transfer in Array(active.values) { apply(transfer.lifecycle.stop(Self.shutDownError), to: transfer) }
            }
            if shuttingDown, active.isEmpty, jobs.isEmpty, ownCommands.isEmpty, finishIfIdle() { break }

            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK { failEverything(performed, "curl_multi_perform") }
            drainCompletions()
            flushReadyHeads()
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
    /// waiting for their consumer, not for the server). libcurl's own low-speed check averages
    /// over several seconds, so a body that stops after a few bytes would outlive the limit.
    func failStalledTransfers() {
        let now = ContinuousClock.now
        guard now >= nextStallCheck else { return }
        nextStallCheck = now.advanced(by: .milliseconds(200))
        let limit = configuration.stallTimeout
        for transfer in Array(active.values) where !transfer.paused && !transfer.uploadPaused {
            if transfer.activity != transfer.stallWatch.seen {
                transfer.stallWatch = (transfer.activity, now)
                continue
            }
            guard transfer.stallWatch.since.duration(to: now) > limit else { continue }
            let error = NetworkError(
                kind: .timedOut, phase: transfer.context.recorder.phase,
                message: "no byte was sent or received for \(limit) (the stall limit)")
            apply(transfer.lifecycle.stop(error), to: transfer)
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
        for transfer in ready { apply(transfer.lifecycle.flush(), to: transfer) }
        ready.removeAll(keepingCapacity: true)
        takenHeads = ready
    }

    func complete(_ transfer: CurlTransfer, code: CURLcode) {
        var failure: NetworkError?
        transfer.handleFailed = code != CURLE_OK
        if code != CURLE_OK, transfer.mayResend(after: code) {
            do {
                try resend(transfer, after: code)
                return
            } catch {
                failure = error.networkError
            }
        }
        // One read of libcurl's counters serves both the metrics and the error's phase.
        let reading = record(transfer)
        if code != CURLE_OK {
            var progress = reading?.progress ?? .init()
            progress.headComplete = transfer.finalHead != nil
            failure = transfer.failure ?? CurlErrorMapping.error(code: code, message: transfer.errorMessage, progress: progress)
        } else if let unproven = transfer.unprovenEnd {
            failure = unproven
        }
        apply(transfer.lifecycle.completed(failure), to: transfer)
    }

    /// Runs what the lifecycle decided.
    func apply(_ action: CurlTransferLifecycle.Action, to transfer: CurlTransfer) {
        switch action {
        case .none:
            break
        case .add:
            do {
                try attach(transfer)
            } catch {
                detach(transfer)
                apply(transfer.lifecycle.completed(error.networkError), to: transfer)
            }
        case .deliverBuffered:
            let data = transfer.bodyBuffer?.takeAll() ?? transfer.earlyBody
            transfer.earlyBody = Data()
            detach(transfer)
            deliver(transfer, body: ResponseBody(data: data))
        case .deliverStream:
            guard let head = transfer.finalHead else { return }
            let buffer = CurlBodyBuffer(
                highWater: configuration.responseBufferBytes, transfer: transfer, first: transfer.earlyBody,
                paused: transfer.paused)
            transfer.earlyBody = Data()
            transfer.bodyBuffer = buffer
            // Pulled chunk by chunk on the reader's executor: an AsyncThrowingStream(unfolding:)
            // cost about nine executor switches per 16 KiB chunk.
            let expected = transfer.isHeadRequest ? nil : CurlTransfer.announcedLength(head)
            deliver(transfer, body: ResponseBody(source: CurlBodyReader(buffer: buffer), expectedLength: expected))
        case .failCaller(let error, let remove):
            if remove { record(transfer) }
            detach(transfer)
            let waiter = transfer.headWaiter
            transfer.headWaiter = nil
            waiter?.resume(throwing: error)
        case .finishBody:
            detach(transfer)
            transfer.bodyBuffer?.finish(.success(()))
        case .failBody(let error, let remove):
            if remove { record(transfer) }
            detach(transfer)
            transfer.bodyBuffer?.finish(.failure(error))
        }
    }

    func deliver(_ transfer: CurlTransfer, body: ResponseBody) {
        guard let head = transfer.finalHead else { return }
        let waiter = transfer.headWaiter
        transfer.headWaiter = nil
        waiter?.resume(returning: TransportResponse(head: head, body: body))
    }

    /// A multi-handle failure leaves no transfer in a known state: fail them all.
    func failEverything(_ code: CURLMcode, _ call: String) {
        let text = String(cString: curl_multi_strerror(code))
        let error = NetworkError(
            kind: .transportFailure, phase: .transfer, message: "\(call) failed: \(text)",
            nativeCode: .init(domain: "CURLMcode", code: Int(code.rawValue)))
        for transfer in Array(active.values) { apply(transfer.lifecycle.stop(error), to: transfer) }
    }
}
