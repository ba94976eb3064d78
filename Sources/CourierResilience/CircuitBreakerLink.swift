import Courier
import HTTPTypes
import Logging

/// The circuit breaker's link: right below retry (when the configuration has a breaker), so each
/// attempt is admitted and counted, a refused one is not retried, and a redirect's outcome counts
/// for the host first asked. See `CircuitBreakerPolicy`.
struct CircuitBreakerLink: Middleware {
    let breaker: CircuitBreaker

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        try await run(request, body, context, next: next)
    }

    private func run(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        let host = request.authority ?? ""
        let (admission, opened) = breaker.admit(host: host, now: RateWindow.elapsedNanoseconds(on: context.clock))
        if let opened { Self.log(opened, host: host, context: context) }
        let probe: Bool
        switch admission {
        case .pass: probe = false
        case .probe: probe = true
        case .refuse(let wait):
            throw NetworkError(
                kind: .circuitOpen, phase: .building,
                message: "the circuit for \(host) is open after repeated failures; nothing was sent; a probe may go in "
                    + "\(Duration.nanoseconds(wait).wholeMilliseconds) ms")
        }
        let outcome: Circuit.Outcome
        let result: Result<TransportResponse, NetworkError>
        do {
            let response = try await next(request, body, context)
            outcome = breaker.policy.failingStatuses.contains(response.head.status.code) ? .failure : .success
            result = .success(response)
        } catch {
            let failure = NetworkError.converting(error, phase: context.recorder.phase)
            outcome = CircuitBreakerPolicy.isHostFailure(failure) ? .failure : .neutral
            result = .failure(failure)
        }
        if let transition = breaker.record(outcome, probe: probe, host: host, now: RateWindow.elapsedNanoseconds(on: context.clock)) {
            Self.log(transition, host: host, context: context)
        }
        return try result.get()
    }

    /// Opening is logged at `warning` (a host is being left alone), closing at `notice`, a probe
    /// at `debug`.
    private static func log(_ transition: Circuit.Transition, host: String, context: RequestContext) {
        let metadata: Logger.Metadata = ["courier.host": .string(host), "courier.request_id": .string(context.requestID)]
        switch transition {
        case .opened: context.logger.warning("courier.circuit.opened", metadata: metadata)
        case .halfOpened: context.logger.debug("courier.circuit.half_opened", metadata: metadata)
        case .closed: context.logger.notice("courier.circuit.closed", metadata: metadata)
        }
    }
}
