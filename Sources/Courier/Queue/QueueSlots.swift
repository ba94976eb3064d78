/// The slot accounting of one ``RequestQueue``, as a value-type state machine without I/O.
///
/// It knows how many calls run (in total and per host), which wait and in what order, and
/// whether the queue is suspended. Each event returns what the owner must do after releasing its
/// lock: start these waiting calls, or let a new one wait, start or fail.
///
/// Invariant: no waiting call could start now. Every event that frees a slot or resumes the
/// queue starts the waiting calls that fit, highest priority first, oldest first.
struct QueueSlots {
    /// One call waiting for a slot.
    struct Waiter: Equatable {
        var id: UInt64
        var host: String
        var priority: RequestPriority
    }

    enum AdmitAction: Equatable {
        /// A slot was taken for the call: run it.
        case start
        /// The call waits; a later event names it in its list of calls to start.
        case wait
        /// The waiting list is full: fail the call.
        case rejectFull
        /// The host could not start the call before its deadline (``RequestQueue/Limits/shedsLateCalls``): fail it.
        case rejectLate(waitAhead: Int, perCallNanoseconds: Int64)
    }

    let limits: RequestQueue.Limits
    private(set) var running = 0
    private(set) var runningByHost: [String: Int] = [:]
    private(set) var isSuspended = false
    /// Waiting calls, one list per priority (index = raw value), oldest first.
    private var waiting: [WaitList<Waiter>] = Array(repeating: WaitList(), count: RequestPriority.allCases.count)
    private(set) var waitingCount = 0
    /// How many calls wait for each host (hosts with none are left out).
    private(set) var waitingByHost: [String: Int] = [:]
    /// The adaptive limit of each host (only with ``RequestQueue/Limits/adaptive``).
    private(set) var adaptiveLimits: [String: AIMDLimit] = [:]
    /// The shortest recent time a call to each host held its slot, for
    /// ``RequestQueue/Limits/shedsLateCalls`` with fixed limits.
    private var fastestHold: [String: FastestHold] = [:]

    init(limits: RequestQueue.Limits) {
        self.limits = limits
    }

    /// The most calls at once to `host` now.
    func limit(of host: String) -> Int {
        guard let adaptive = limits.adaptive else { return limits.maxConcurrentPerHost }
        return adaptiveLimits[host]?.allowed ?? adaptive.initialLimit
    }

    /// A new call asks for a slot.
    /// - Parameter remainingNanoseconds: The time left before the call's deadline, for
    ///   ``RequestQueue/Limits/shedsLateCalls``; `nil` for none.
    mutating func admit(id: UInt64, host: String, priority: RequestPriority, remainingNanoseconds: Int64? = nil) -> AdmitAction {
        if !isSuspended, fits(host: host) {
            take(host: host)
            return .start
        }
        guard waitingCount < limits.maxWaiting else { return .rejectFull }
        if limits.shedsLateCalls, !isSuspended, let remainingNanoseconds,
            let (wait, perCall) = estimatedWait(host: host, ahead: waitingByHost[host, default: 0] + 1),
            wait > Double(remainingNanoseconds)
        {
            return .rejectLate(waitAhead: waitingByHost[host, default: 0], perCallNanoseconds: Int64(perCall))
        }
        waiting[priority.rawValue].append(Waiter(id: id, host: host, priority: priority))
        waitingCount += 1
        waitingByHost[host, default: 0] += 1
        return .wait
    }

    /// How long `ahead` calls for `host` (this one included) wait before the last of them starts,
    /// and the time per call the estimate used; `nil` before a call to the host has finished.
    ///
    /// With fixed limits it is a floor, so that a call is shed only when it surely cannot start in
    /// time: whole rounds of the host's limit after the first (the calls running now may end at
    /// any moment), each at the shortest time a call held its slot lately. A mean would follow a
    /// burst's slow start and shed calls that would have started in time. With adaptive limits it
    /// is the adaptive limiter's own estimate: every round at the host's recent average.
    func estimatedWait(host: String, ahead: Int) -> (wait: Double, perCall: Double)? {
        let rounds = (Double(ahead) / Double(max(1, limit(of: host)))).rounded(.up)
        if limits.adaptive != nil {
            guard let average = adaptiveLimits[host]?.averageNanoseconds, average > 0 else { return nil }
            return (rounds * average, average)
        }
        guard let fastest = fastestHold[host]?.nanoseconds else { return nil }
        return ((rounds - 1) * Double(fastest), Double(fastest))
    }

    /// A waiting call gave up (cancelled, timed out). Returns `false` when it was not waiting
    /// (it already started, or never waited).
    mutating func withdraw(id: UInt64) -> Bool {
        for level in waiting.indices {
            guard let waiter = waiting[level].removeFirst(where: { $0.id == id }) else { continue }
            waitingCount -= 1
            stopWaiting(host: waiter.host)
            return true
        }
        return false
    }

    /// A running call finished with its slot. Returns the waiting calls that start now.
    /// - Parameters:
    ///   - heldNanoseconds: How long it held the slot, for adaptive limits; `nil` when unknown.
    ///   - failed: Whether it failed by timing out or losing its connection (adaptive limits back off).
    mutating func release(host: String, heldNanoseconds: Int64? = nil, failed: Bool = false) -> [UInt64] {
        if let heldNanoseconds {
            if let adaptive = limits.adaptive {
                adaptiveLimits[host, default: AIMDLimit(initial: adaptive.initialLimit)].record(
                    nanoseconds: heldNanoseconds, failed: failed, policy: adaptive, maximum: limits.maxConcurrentPerHost)
            } else {
                fastestHold[host, default: FastestHold()].record(max(1, heldNanoseconds))
            }
        }
        running -= 1
        if let count = runningByHost[host] {
            runningByHost[host] = count > 1 ? count - 1 : nil
        }
        return startWaiting()
    }

    /// Stops starting calls; running calls go on.
    mutating func suspend() {
        isSuspended = true
    }

    /// Starts calls again. Returns the waiting calls that start now, in priority order.
    mutating func resume() -> [UInt64] {
        isSuspended = false
        return startWaiting()
    }

    private mutating func stopWaiting(host: String) {
        if let count = waitingByHost[host] {
            waitingByHost[host] = count > 1 ? count - 1 : nil
        }
    }

    /// The ids waiting now, in the order they would start if every host had room.
    var waitingOrder: [UInt64] {
        waiting.reversed().flatMap { $0.elements.map(\.id) }
    }

    private func fits(host: String) -> Bool {
        running < limits.maxConcurrent && runningByHost[host, default: 0] < limit(of: host)
    }

    private mutating func take(host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }

    /// Starts waiting calls that fit, highest priority first and oldest first within a priority.
    /// A call whose host is full is skipped, so one busy host does not hold back the others.
    private mutating func startWaiting() -> [UInt64] {
        guard !isSuspended, waitingCount > 0 else { return [] }
        var started: [UInt64] = []
        for level in waiting.indices.reversed() {
            var list = waiting[level]
            waiting[level] = WaitList()  // keeps `list` uniquely referenced: no copy
            list.drain { waiter in
                guard running < limits.maxConcurrent else { return nil }
                guard fits(host: waiter.host) else { return false }
                take(host: waiter.host)
                stopWaiting(host: waiter.host)
                started.append(waiter.id)
                return true
            }
            waiting[level] = list
            if running >= limits.maxConcurrent { break }
        }
        waitingCount -= started.count
        return started
    }
}

/// The shortest time a call to one host held its queue slot lately: the minimum of the current
/// window of 100 calls and of the one before, so it follows a host that got slower for good.
struct FastestHold: Equatable {
    static let window = 100
    private var current = Int64.max
    private var previous = Int64.max
    private var samples = 0

    /// Counts one call that held its slot for `nanoseconds`.
    mutating func record(_ nanoseconds: Int64) {
        current = min(current, nanoseconds)
        samples += 1
        if samples % Self.window == 0 {
            previous = current
            current = .max
        }
    }

    /// The shortest time, once a call has been counted.
    var nanoseconds: Int64? {
        let fastest = min(current, previous)
        return fastest == .max ? nil : fastest
    }
}
