import Synchronization

/// What one request of a load run ended with.
enum CallOutcome: Sendable {
    /// A 2xx response with this many body bytes, over this HTTP version (if the transport says).
    case success(bytes: Int, httpVersion: String?)
    /// Anything else, described as `kind: message`.
    case failure(String)
}

/// The totals of a load run.
struct LoadTally: Sendable {
    var completed = 0
    var failed = 0
    var firstError: String?
    var recorder = LatencyRecorder()
    var bytesReceived = 0.0
    var negotiatedHTTP: String?
    var lastCompletion: ContinuousClock.Instant?

    mutating func add(_ other: LoadTally) {
        completed += other.completed
        failed += other.failed
        firstError = firstError ?? other.firstError
        recorder.add(other.recorder)
        bytesReceived += other.bytesReceived
        negotiatedHTTP = negotiatedHTTP ?? other.negotiatedHTTP
        if let last = other.lastCompletion, lastCompletion.map({ last > $0 }) ?? true { lastCompletion = last }
    }
}

/// Keeps `concurrency` requests in flight until `end`, or until `maxRequests` have started.
///
/// Each of `concurrency` tasks starts its next request when its last one ends, as a service with
/// that many callers would. No request starts after `end`; requests in flight then finish and count.
enum LoadLoop {
    static func run(
        concurrency: Int, until end: ContinuousClock.Instant, maxRequests: Int?,
        call: @escaping @Sendable () async -> CallOutcome
    ) async -> LoadTally {
        let started = Atomic<Int>(0)
        let limit = maxRequests ?? Int.max
        return await inParallel(concurrency: concurrency) {
            let clock = ContinuousClock()
            var tally = LoadTally()
            // One clock read per request: the end of one request is the start of the next.
            var begin = clock.now
            while begin < end, started.wrappingAdd(1, ordering: .relaxed).newValue <= limit {
                let outcome = await call()
                let finish = clock.now
                tally.lastCompletion = finish
                switch outcome {
                case .success(let bytes, let version):
                    tally.completed += 1
                    tally.bytesReceived += Double(bytes)
                    tally.recorder.record(finish - begin)
                    if tally.negotiatedHTTP == nil { tally.negotiatedHTTP = version }
                case .failure(let message):
                    tally.failed += 1
                    if tally.firstError == nil { tally.firstError = message }
                }
                begin = finish
            }
            return tally
        }
    }

    /// Runs `body` in `concurrency` child tasks and adds up their tallies.
    private static func inParallel(
        concurrency: Int, _ body: @escaping @Sendable () async -> LoadTally
    ) async -> LoadTally {
        await withTaskGroup(of: LoadTally.self) { group in
            for _ in 0..<max(1, concurrency) { group.addTask(operation: body) }
            var total = LoadTally()
            for await tally in group { total.add(tally) }
            return total
        }
    }
}
