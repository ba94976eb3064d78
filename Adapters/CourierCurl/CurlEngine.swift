import CCurl
import Courier
import Foundation
import Logging
import Synchronization

/// The thread that owns one libcurl multi handle and runs every transfer on it.
///
/// Other threads talk to it only through ``submit(_:)``, ``stop(_:because:)`` and
/// ``resume(_:)``: each appends a command to a locked inbox and wakes the loop with
/// `curl_multi_wakeup`. The loop takes the commands, drives libcurl (`curl_multi_perform`), hands
/// finished transfers their outcome, and sleeps in `curl_multi_poll` until a socket, a timer or a
/// wakeup needs it. No lock is held while libcurl runs or while a caller is resumed.
///
/// `@unchecked Sendable`: the fields marked "engine thread" are only touched by the loop; the
/// inbox is behind its lock, and the multi handle is only used by the loop except for
/// `curl_multi_wakeup`, which libcurl allows from any thread and which is called under the inbox
/// lock so that it can never race the handle's cleanup.
final class CurlEngine: @unchecked Sendable {
    private enum Command {
        case start(CurlTransfer)
        case stop(CurlTransfer, NetworkError)
        case resume(CurlTransfer)
        /// A task's next step, for the engine's task executor (see ``CurlEngine/enqueue(_:)``).
        case run(UnownedJob)
    }

    private struct Inbox {
        var commands: [Command] = []
        /// False once shutdown began: new transfers are refused.
        var accepting = true
        /// True once the loop has exited and the multi handle is gone.
        var stopped = false
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Counters for monitoring and tests: how often backpressure paused and resumed a transfer.
    /// (Nothing is counted per call: the counters cost a lock only when backpressure acts.)
    struct Statistics: Sendable, Equatable {
        /// Times a transfer was paused because its reader fell behind.
        var pauses = 0
        /// Times a paused transfer was resumed.
        var resumes = 0
        /// Requests sent again after libcurl's spurious HTTP/2 failures (libcurl before 8.0).
        var http2Resends = 0
    }

    let configuration: CurlTransport.Configuration
    private let multi: UnsafeMutableRawPointer
    private let inbox = Locked(Inbox())
    private let counters = Locked(Statistics())

    /// A snapshot of the counters.
    var statistics: Statistics { counters.withLock { $0 } }

    // Engine thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// When ``failStalledTransfers()`` looks next.
    private var nextStallCheck = ContinuousClock.now
    /// Easy handles (with their error buffers) kept for the next transfers.
    private var pool: [CurlHandle] = []
    private var readyHeads: [CurlTransfer] = []
    /// Commands given on the engine thread itself (by a task it runs): no lock, no wakeup.
    private var ownCommands: [Command] = []
    /// Empty arrays with capacity, swapped with the inbox, ``ownCommands`` and ``readyHeads`` when
    /// the loop takes their contents (so that taking them allocates nothing).
    private var takenCommands: [Command] = []
    private var takenOwnCommands: [Command] = []
    private var takenHeads: [CurlTransfer] = []
    /// Task steps waiting to run on the engine thread.
    private var jobs = CurlJobQueue()
    /// The engine thread's id (`pthread_self`) while its loop runs, otherwise 0.
    private let threadID = Atomic<UInt>(0)
    private var addresses = CurlMetrics.AddressCache()
    /// Where each transfer's URL is written for libcurl (which copies it).
    private var urlScratch: [CChar] = []
    private var shuttingDown = false

    /// Creates the multi handle with the configured limits and starts the loop's thread.
    /// - Throws: ``CurlCallFailure`` when libcurl cannot be initialised.
    init(configuration: CurlTransport.Configuration) throws(CurlCallFailure) {
        self.configuration = configuration
        try CurlCall.check(CurlRuntime.globalInit, "curl_global_init")
        guard let multi = curl_multi_init() else {
            throw CurlCallFailure(call: "curl_multi_init", code: Int(CURLM_OUT_OF_MEMORY.rawValue), text: "no multi handle")
        }
        self.multi = multi
        do {
            try CurlCall.check(
                ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnections), "MAX_TOTAL_CONNECTIONS")
            try CurlCall.check(
                ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost), "MAX_HOST_CONNECTIONS")
            try CurlCall.check(ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxIdleConnections), "MAXCONNECTS")
            try CurlCall.check(ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)), "PIPELINING")
            try CurlCall.check(
                ccurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams),
                "MAX_CONCURRENT_STREAMS")
        } catch {
            _ = curl_multi_cleanup(multi)
            throw error
        }
        let thread = Thread { [self] in run() }
        thread.name = "courier-curl"
        thread.start()
    }

    // MARK: Commands (any thread)

    /// Hands a transfer to the engine; its ``CurlTransfer/headWaiter`` must already be set.
    /// Fails the transfer at once when the engine is shutting down.
    func submit(_ transfer: CurlTransfer) {
        if !post(.start(transfer), requireAccepting: true) {
            transfer.headWaiter?.resume(throwing: Self.shutDownError)
            transfer.headWaiter = nil
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

    /// Refuses new transfers, stops those in flight, and returns once the thread has exited and
    /// every libcurl handle is released. Safe to call more than once.
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
    private func post(_ command: Command?, requireAccepting: Bool) -> Bool {
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

    static let shutDownError = NetworkError(kind: .cancelled, phase: .queued, message: "the curl transport was shut down")

    // MARK: The loop (engine thread)

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
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
    private func failStalledTransfers() {
        let now = ContinuousClock.now
        guard now >= nextStallCheck else { return }
        nextStallCheck = now.advanced(by: .milliseconds(200))
        let limit = configuration.stallTimeout
        for transfer in Array(active.values) where !transfer.paused {
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

    /// Marks the engine stopped if no command arrived meanwhile. Under the inbox lock, so no
    /// wakeup can be issued once this returns true.
    private func finishIfIdle() -> Bool {
        inbox.withLock { inbox in
            guard inbox.commands.isEmpty else { return false }
            inbox.stopped = true
            return true
        }
    }

    /// Runs the waiting task steps, and those they enqueue, up to ``CurlJobQueue/stepsPerRound``.
    private func runJobs() {
        var budget = CurlJobQueue.stepsPerRound
        while !jobs.isEmpty, budget > 0 {
            let batch = jobs.takeBatch()
            for index in batch.indices {
                guard budget > 0 else {
                    jobs.putBack(batch[index...])
                    break
                }
                budget -= 1
                batch[index].runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    /// Handles the commands tasks on the engine thread gave, including those they give meanwhile.
    private func handleOwnCommands() {
        while !ownCommands.isEmpty {
            var commands = takenOwnCommands
            swap(&ownCommands, &commands)
            for command in commands { handle(command) }
            commands.removeAll(keepingCapacity: true)
            takenOwnCommands = commands
        }
    }

    private func handle(_ command: Command) {
        switch command {
        case .run(let job):
            jobs.append(job)
        case .start(let transfer):
            transfer.stallWatch = (transfer.activity, .now)
            if shuttingDown { _ = transfer.lifecycle.stop(Self.shutDownError) }
            apply(transfer.lifecycle.start(), to: transfer)
        case .stop(let transfer, let error):
            apply(transfer.lifecycle.stop(error), to: transfer)
        case .resume(let transfer):
            guard let easy = transfer.easy, transfer.paused else { return }
            transfer.paused = false
            transfer.stallWatch = (transfer.activity, .now)
            counters.withLock { $0.resumes += 1 }
            let code = curl_easy_pause(easy, ccurl_pause_continue)
            if code != CURLE_OK {
                let error = CurlErrorMapping.error(code: code, message: transfer.errorMessage, progress: progress(of: transfer))
                apply(transfer.lifecycle.stop(error), to: transfer)
            }
        }
    }

    /// Called from the write callback when backpressure pauses a transfer.
    func notePaused() {
        counters.withLock { $0.pauses += 1 }
    }

    /// Called from the header callback when a transfer's final head is complete.
    func headCompleted(_ transfer: CurlTransfer) {
        transfer.lifecycle.headCompleted()
        readyHeads.append(transfer)
    }

    private func drainCompletions() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = active[easy]
            else { continue }
            complete(transfer, code: message.pointee.data.result)
        }
    }

    private func flushReadyHeads() {
        guard !readyHeads.isEmpty else { return }
        var ready = takenHeads
        swap(&readyHeads, &ready)
        for transfer in ready { apply(transfer.lifecycle.flush(), to: transfer) }
        ready.removeAll(keepingCapacity: true)
        takenHeads = ready
    }

    private func complete(_ transfer: CurlTransfer, code: CURLcode) {
        var failure: NetworkError?
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
            failure =
                transfer.failure
                ?? CurlErrorMapping.error(code: code, message: transfer.errorMessage, progress: reading?.progress ?? .init())
        }
        apply(transfer.lifecycle.completed(failure), to: transfer)
    }

    /// Sends the same request again on a fresh handle (see ``CurlTransfer/mayResend(after:)``).
    /// The caller never sees it; the call's logger says so at `debug`, with libcurl's reason.
    private func resend(_ transfer: CurlTransfer, after code: CURLcode) throws(CurlCallFailure) {
        transfer.http2Resends += 1
        counters.withLock { $0.http2Resends += 1 }
        let logger = transfer.context.logger
        if logger.logLevel <= .debug {
            logger.debug(
                "courier.curl.http2_resent",
                metadata: [
                    "courier.attempt": .stringConvertible(transfer.http2Resends + 1),
                    "courier.error": .string(CurlErrorMapping.error(code: code, message: transfer.errorMessage, progress: .init()).message),
                ])
        }
        detach(transfer)
        transfer.prepareForNextResponse()
        transfer.lifecycle.restart()
        transfer.stallWatch = (transfer.activity, .now)  // The stall limit counts from the new attempt.
        try attach(transfer)
    }

    /// Runs what the lifecycle decided.
    private func apply(_ action: CurlTransferLifecycle.Action, to transfer: CurlTransfer) {
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
            let reader = CurlBodyReader(buffer: buffer)
            let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await reader.next() })
            let expected = transfer.isHeadRequest ? nil : CurlTransfer.announcedLength(head)
            deliver(transfer, body: ResponseBody(stream: stream, expectedLength: expected))
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

    private func deliver(_ transfer: CurlTransfer, body: ResponseBody) {
        guard let head = transfer.finalHead else { return }
        let waiter = transfer.headWaiter
        transfer.headWaiter = nil
        waiter?.resume(returning: TransportResponse(head: head, body: body))
    }

    /// Puts the transfer's handle on the multi handle, taking one from the pool.
    private func attach(_ transfer: CurlTransfer) throws(CurlCallFailure) {
        guard let handle = pool.popLast() ?? CurlHandle.make() else {
            throw CurlCallFailure(call: "curl_easy_init", code: Int(CURLE_OUT_OF_MEMORY.rawValue), text: "no easy handle")
        }
        let easy = handle.easy
        handle.errorBuffer[0] = 0
        transfer.easy = easy
        transfer.errorBuffer = handle.errorBuffer
        active[easy] = transfer
        try CurlRequestSetup.configure(easy, for: transfer, configuration: configuration, scratch: &urlScratch)
        try CurlCall.check(curl_multi_add_handle(multi, easy), "curl_multi_add_handle")
        transfer.context.recorder.enter(.connect)
    }

    /// Takes the transfer's handle off the multi handle (which closes its connection or resets its
    /// HTTP/2 stream if it was still running) and returns it to the pool.
    private func detach(_ transfer: CurlTransfer) {
        transfer.bodyBuffer?.releaseTransfer()
        guard let easy = transfer.easy else { return }
        // Removing a handle that is not on the multi handle is a no-op in libcurl; any other
        // failure leaves nothing to undo, so the handle is simply not reused.
        let removed = curl_multi_remove_handle(multi, easy)
        active[easy] = nil
        let errorBuffer = transfer.errorBuffer
        transfer.easy = nil
        transfer.errorBuffer = nil
        transfer.paused = false
        if removed == CURLM_OK, pool.count < configuration.handlePoolSize, let errorBuffer {
            curl_easy_reset(easy)
            pool.append(CurlHandle(easy: easy, errorBuffer: errorBuffer))
        } else {
            curl_easy_cleanup(easy)
            errorBuffer?.deallocate()
        }
        transfer.headerList?.free()
        transfer.headerList = nil
    }

    private func progress(of transfer: CurlTransfer) -> CurlErrorMapping.Progress {
        guard let easy = transfer.easy else { return .init() }
        return CurlMetrics.read(easy, usesTLS: transfer.usesTLS, addresses: &addresses).progress
    }

    /// Copies libcurl's figures into the call's recorder, and returns them.
    @discardableResult
    private func record(_ transfer: CurlTransfer) -> CurlMetrics.Reading? {
        guard let easy = transfer.easy else { return nil }
        let reading = CurlMetrics.read(easy, usesTLS: transfer.usesTLS, addresses: &addresses)
        transfer.context.recorder.update { metrics in
            metrics.phaseTimings = .available(reading.timings)
            metrics.httpVersion = reading.httpVersion
            metrics.reusedConnection = reading.reused
            metrics.remoteAddress = reading.remoteAddress
            metrics.bytesSent = reading.bytesSent
        }
        return reading
    }

    /// A multi-handle failure leaves no transfer in a known state: fail them all.
    private func failEverything(_ code: CURLMcode, _ call: String) {
        let text = String(cString: curl_multi_strerror(code))
        let error = NetworkError(
            kind: .transportFailure, phase: .transfer, message: "\(call) failed: \(text)",
            nativeCode: .init(domain: "CURLMcode", code: Int(code.rawValue)))
        for transfer in Array(active.values) { apply(transfer.lifecycle.stop(error), to: transfer) }
    }
}

// MARK: Task executor

extension CurlEngine: TaskExecutor {
    /// Whether the caller runs on the engine thread, inside its loop.
    var isEngineThread: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    /// Runs a task's next step on the engine thread, between two rounds of libcurl work.
    ///
    /// A step enqueued on the engine thread (the usual case: the engine resumed a caller) waits in
    /// a plain array and runs before the loop polls again, so the round trip from a finished
    /// transfer to its caller and on to the caller's next request needs no lock, no wakeup and no
    /// other thread. Once shutdown has begun, steps from other threads go to the global executor
    /// (and, once the loop has ended, every step), so no task is ever stranded.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if isEngineThread {
            jobs.append(job)
        } else if !post(.run(job), requireAccepting: true) {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}

/// The consumer's handle on a streamed body. When the consumer drops the body before its end
/// (the stream and its iterator are released), the transfer is stopped.
final class CurlBodyReader: Sendable {
    private let buffer: CurlBodyBuffer

    init(buffer: CurlBodyBuffer) {
        self.buffer = buffer
    }

    func next() async throws -> Data? {
        try await buffer.next()
    }

    deinit {
        buffer.consumerWentAway()
    }
}
