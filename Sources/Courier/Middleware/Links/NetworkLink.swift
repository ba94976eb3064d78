import HTTPTypes

/// Wraps one network middleware in the chain: debug builds check that it called `next` exactly
/// once per attempt, and fail the call with ``NetworkError/Kind/middlewareMisuse`` when not.
struct NetworkLink: Middleware {
    /// The network middleware.
    let wrapped: any Middleware

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        #if DEBUG
            let calls = Locked(0)
            let counted: Middleware.Next = { request, body, context in
                let count = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard count == 1 else { throw misuse("called next more than once") }
                return try await next(request, body, context)
            }
            let response = try await wrapped.intercept(request, body: body, context: context, next: counted)
            guard calls.withLock({ $0 }) == 1 else { throw misuse("returned without calling next") }
            return response
        #else
            return try await wrapped.intercept(request, body: body, context: context, next: next)
        #endif
    }

    private func misuse(_ what: String) -> NetworkError {
        NetworkError(
            kind: .middlewareMisuse, phase: .sending,
            message: "network middleware \(type(of: wrapped)) \(what); network middleware must call next exactly once")
    }
}
