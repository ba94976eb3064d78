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
    var histogram = LatencyHistogram()
    var bytesReceived = 0.0
    var negotiatedHTTP: String?
    /// From the run's start to its last completion (zero when nothing completed).
    var elapsed = Duration.zero

    mutating func add(_ other: LoadTally) {
        completed += other.completed
        failed += other.failed
        firstError = firstError ?? other.firstError
        histogram.add(other.histogram)
        bytesReceived += other.bytesReceived
        negotiatedHTTP = negotiatedHTTP ?? other.negotiatedHTTP
        elapsed = max(elapsed, other.elapsed)
    }
}

/// Sends requests from `concurrency` callers until `end`, or until `maxRequests` have started.
///
/// - **Closed loop** (`rate` is `nil`): each caller starts its next request when its last one
///   ends, as a service with that many callers would. A request's latency runs from its start.
/// - **Open loop** (`rate` requests per second): each caller owns an even share of a fixed
///   schedule (caller `k` sends at `start + (k + i·concurrency) / rate`), whatever the responses do.
///   A caller whose last response came late sends at once, and the request's latency runs from the
///   time it was meant to be sent, not from when it went out: the wait a slow server causes is
///   counted instead of hidden (coordinated omission corrected, as wrk2 does). The callers cap the
///   requests in flight, as wrk2's connections do.
///
/// No request is sent after `end`; requests in flight then finish and count. The clock is a
/// parameter so that tests can run the schedule on virtual time.
enum LoadLoop {
    static func run(
        concurrency: Int, rate: Double? = nil, for duration: Duration, maxRequests: Int?,
        call: @escaping @Sendable () async -> CallOutcome
    ) async -> LoadTally {
        await run(concurrency: concurrency, rate: rate, for: duration, maxRequests: maxRequests, clock: ContinuousClock(), call: call)
    }

    static func run<C: Clock>(
        concurrency: Int, rate: Double?, for duration: Duration, maxRequests: Int?, clock: C,
        call: @escaping @Sendable () async -> CallOutcome
    ) async -> LoadTally where C.Duration == Duration {
        let started = Atomic<Int>(0)
        let limit = maxRequests ?? Int.max
        let callers = max(1, concurrency)
        let origin = clock.now
        let end = origin.advanced(by: duration)
        // The open loop's step between two sends of one caller, and of two callers.
        let schedule = rate.map { rate in (perCaller: Duration.seconds(Double(callers) / rate), offset: Duration.seconds(1 / rate)) }
        return await inParallel(concurrency: callers) { caller in
            var tally = LoadTally()
            // The closed loop reads the clock once per request: one request's end is the next one's start.
            var intended = schedule.map { origin.advanced(by: $0.offset * caller) } ?? clock.now
            // The open loop also stops at `end` when it has fallen behind its schedule: the sends it
            // did not make show as a rate below the one asked for.
            while intended < end, schedule == nil || clock.now < end, started.wrappingAdd(1, ordering: .relaxed).newValue <= limit {
                if schedule != nil, clock.now < intended {
                    try? await clock.sleep(until: intended, tolerance: nil)
                }
                let outcome = await call()
                let finish = clock.now
                tally.elapsed = origin.duration(to: finish)
                switch outcome {
                case .success(let bytes, let version):
                    tally.completed += 1
                    tally.bytesReceived += Double(bytes)
                    tally.histogram.record(intended.duration(to: finish))
                    if tally.negotiatedHTTP == nil { tally.negotiatedHTTP = version }
                case .failure(let message):
                    tally.failed += 1
                    if tally.firstError == nil { tally.firstError = message }
                }
                intended = schedule.map { intended.advanced(by: $0.perCaller) } ?? finish
            }
            return tally
        }
    }

    /// Runs `body` in `concurrency` child tasks (passing each its number) and adds up their tallies.
    private static func inParallel(
        concurrency: Int, _ body: @escaping @Sendable (Int) async -> LoadTally
    ) async -> LoadTally {
        await withTaskGroup(of: LoadTally.self) { group in
            for caller in 0..<max(1, concurrency) { group.addTask { await body(caller) } }
            var total = LoadTally()
            for await tally in group { total.add(tally) }
            return total
        }
    }
}
