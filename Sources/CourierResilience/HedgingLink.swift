import Courier
import HTTPTypes

/// Hedging (see `HedgingPolicy`), a link below retry: a call of an idempotent request that has
/// not answered by its endpoint's percentile gets one more copy, through the rest of the chain on a
/// recorder of its own; the first answer wins and the other copy is cancelled (which stops its
/// transfer). A copy that fails leaves the call to the other one.
struct HedgingLink: Middleware {
    let tracker: HedgeTracker
    /// The retry budget's ledger, shared with retry: every copy is taken from it.
    let ledger: RetryBudgetLedger
    /// Whether this link counts the calls toward the budget (when the chain has no retry link,
    /// which otherwise does).
    let depositsCalls: Bool

    init(policy: HedgingPolicy, ledger: RetryBudgetLedger, depositsCalls: Bool) {
        tracker = HedgeTracker(policy: policy)
        self.ledger = ledger
        self.depositsCalls = depositsCalls
    }

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        try await run(request, body, context, next)
    }

    private func run(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        guard RepeatRule.mayRepeat(request, body: body, reason: .concurrentCopy) else {
            return try await next(request, body, context)
        }
        let key = context.endpointName ?? Self.key(request)
        let clock = context.clock
        let host = request.authority ?? ""
        if depositsCalls { ledger.deposit(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: clock)) }
        let start = clock.now
        guard let delay = tracker.delay(for: key) else {
            let response = try await next(request, body, context)
            tracker.record(key, latency: start.duration(to: clock.now), hedged: false)
            return response
        }
        let (response, hedged) = try await race(request, body, context, next, after: start.advanced(by: delay), host: host)
        tracker.record(key, latency: start.duration(to: clock.now), hedged: hedged)
        return response
    }

    private enum Outcome: Sendable {
        case answer(TransportResponse, copy: TransferRecorder?)
        case failure(any Error)
        case timer
    }

    /// The first copy now, a second at `instant` unless the first has answered or the cap or the
    /// budget says no; the first answer wins. The copies' metrics are settled once both have ended
    /// (the group waits for the cancelled one), so a late write of the loser cannot overwrite them.
    private func race(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, _ next: @escaping Middleware.Next,
        after instant: ContinuousClock.Instant, host: String
    ) async throws -> (TransportResponse, Bool) {
        let clock = context.clock
        let ledger = ledger
        let (result, hedged, copyRecorder, copyWon) = await withTaskGroup(of: Outcome.self) {
            group -> (Result<TransportResponse, any Error>, Bool, TransferRecorder?, Bool) in
            group.addTask {
                do {
                    return .answer(try await next(request, body, context), copy: nil)
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                _ = await clock.sleep(until: instant)
                return .timer
            }
            var running = 1
            var hedged = false
            var firstFailure: (any Error)?
            var copyRecorder: TransferRecorder?
            while let outcome = await group.next() {
                switch outcome {
                case .timer:
                    guard running == 1, !hedged, !Task.isCancelled,
                        ledger.withdraw(host: host, elapsedNanoseconds: RateWindow.elapsedNanoseconds(on: clock))
                    else { continue }
                    hedged = true
                    running += 1
                    context.recorder.update { $0.hedges += 1 }
                    // A part of the call: its own record, the call's deadline, and no progress
                    // (the copy's bytes are not the call's unless it wins, see below).
                    let copyContext = context.forPartOfCall()
                    let recorder = copyContext.recorder
                    copyRecorder = recorder
                    group.addTask {
                        do {
                            return .answer(try await next(request, body, copyContext), copy: recorder)
                        } catch {
                            return .failure(error)
                        }
                    }
                case .answer(let response, let copy):
                    group.cancelAll()
                    return (.success(response), hedged, copyRecorder, copy != nil)
                case .failure(let error):
                    running -= 1
                    firstFailure = firstFailure ?? error
                    // Without a copy in flight (none sent, or both failed) the call has failed.
                    if running == 0 {
                        group.cancelAll()
                        return (.failure(firstFailure ?? error), hedged, copyRecorder, false)
                    }
                }
            }
            return (.failure(firstFailure ?? CancellationError()), hedged, copyRecorder, false)
        }
        if let copyRecorder {
            // The copy's hand-offs to the transport count among the call's attempts.
            let copy = copyRecorder.metrics
            context.recorder.update { $0.attempts += copy.attempts }
            if copyWon { Self.adopt(copy, into: context.recorder) }
        }
        let response = try result.get()
        // A winning copy's body is counted as the call reads it (decoded already, so with no
        // expected length).
        if copyWon, let progress = context.progressMeter {
            return (TransportResponse(head: response.head, body: progress.counting(response.body, announced: nil)), hedged)
        }
        return (response, hedged)
    }

    /// The winning copy's view of the transfer replaces the first copy's.
    private static func adopt(_ copy: RequestMetrics, into recorder: TransferRecorder) {
        recorder.update {
            $0.hedgeWon = true
            $0.takeTransferView(of: copy)
        }
    }

    /// The endpoint of a call without a name: method, authority and path without the query.
    static func key(_ request: HTTPRequest) -> String {
        let path = request.path.map { $0.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] } ?? "/"
        return "\(request.method.rawValue) \(request.authority ?? "")\(path)"
    }
}
