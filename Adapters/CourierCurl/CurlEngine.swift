import CCurl
import Courier
import Foundation
import Logging
import Synchronization

/// The thread that owns one libcurl multi handle and runs every transfer on it.
///
/// Other threads talk to it only through ``submit(_:waiter:)``, ``stop(_:because:)`` and
/// ``resume(_:)``: each appends a command to a locked inbox and wakes the loop with
/// `curl_multi_wakeup`. The loop takes the commands, drives libcurl (`curl_multi_perform`), hands
/// finished transfers their outcome, and sleeps in `curl_multi_poll` until a socket, a timer or a
/// wakeup needs it. No lock is held while libcurl runs or while a caller is resumed.
///
/// `@unchecked Sendable`: the fields marked "engine thread" are only touched by the loop; the
/// inbox is behind its lock, and the multi handle is only used by the loop except for
/// `curl_multi_wakeup`, which libcurl allows from any thread and which is called under the inbox
/// lock so that it can never race the handle's cleanup.
///
/// The engine is split by concept: the inbox and wake-up (`CurlEngine+Inbox`), the poll loop
/// (`+Loop`), the task executor (`+Executor`), the handle pool (`+HandlePool`), the libcurl < 8
/// HTTP/2 resend workaround (`+Resend`) and the metrics reading (`+Metrics`). Their state is
/// declared here; members are internal only so that those files can reach them, and nothing
/// outside the engine touches the fields marked "engine thread".
final class CurlEngine: @unchecked Sendable {
    enum Command {
        /// A transfer and its caller, waiting for the head.
        case start(CurlTransfer, CurlHeadWaiter)
        case stop(CurlTransfer, NetworkError)
        case resume(CurlTransfer)
        case resumeUpload(CurlTransfer)
        /// A task's next step, for the engine's task executor (see ``CurlEngine/enqueue(_:)``).
        case run(UnownedJob)
    }

    struct Inbox {
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
        /// Easy handles made (a transfer on a pooled handle makes none).
        var handlesMade = 0
    }

    let configuration: CurlTransport.Configuration
    let multi: UnsafeMutableRawPointer
    let inbox = Locked(Inbox())
    let counters = Locked(Statistics())

    /// A snapshot of the counters.
    var statistics: Statistics { counters.withLock { $0 } }
    /// Transfers made for this engine and not yet deinitialized: back to 0 once every call has
    /// ended (nothing keeps a finished transfer, its buffers or its context alive).
    let liveTransfers = Atomic<Int>(0)
    /// The connections libcurl opened and closed for this engine (see ``CurlConnections``).
    let connections: CurlConnections

    // Engine thread only.
    var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// When ``failStalledTransfers()`` looks next.
    var nextStallCheck = ContinuousClock.now
    /// Easy handles (with their error buffers) kept for the next transfers.
    var pool: [CurlHandle] = []
    /// Transfers whose final head arrived in this round: handed over at its end.
    var readyHeads: [CurlTransfer] = []
    /// Body buffers whose waiting reader gets this round's bytes at its end (``wakeReaders()``).
    var readersToWake: [CurlBodyBuffer] = []
    /// Commands given on the engine thread itself (by a task it runs): no lock, no wakeup.
    var ownCommands: [Command] = []
    /// Empty arrays with capacity, swapped with the inbox, ``ownCommands``, ``readyHeads`` and
    /// ``readersToWake`` when the loop takes their contents (so that taking them allocates nothing).
    var takenCommands: [Command] = []
    var takenOwnCommands: [Command] = []
    var takenHeads: [CurlTransfer] = []
    var takenReaders: [CurlBodyBuffer] = []
    /// Task steps waiting to run on the engine thread.
    var jobs = CurlJobQueue()
    /// The engine thread's id (`pthread_self`) while its loop runs, otherwise 0.
    let threadID = Atomic<UInt>(0)
    var addresses = CurlMetrics.AddressCache()
    /// Where each transfer's URL is written for libcurl (which copies it).
    var urlScratch: [CChar] = []
    var shuttingDown = false

    /// Creates the multi handle with the configured limits and starts the loop's thread.
    /// - Throws: ``CurlCallFailure`` when libcurl cannot be initialised.
    init(configuration: CurlTransport.Configuration) throws(CurlCallFailure) {
        connections = CurlConnections(transport: configuration.name)
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

    static let shutDownError = NetworkError(kind: .cancelled, phase: .queued, message: "the curl transport was shut down")

    /// Called from the write callback when backpressure pauses a transfer.
    func notePaused() {
        counters.withLock { $0.pauses += 1 }
    }
}
