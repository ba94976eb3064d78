import Foundation
import HTTPTypes

/// One transfer shared by identical calls (de-duplication), and the callers waiting for it.
struct SharedTransfer {
    /// The response every caller gets: the head and the whole body.
    struct Outcome: Sendable {
        var head: HTTPResponse
        var body: Data
        /// True for callers that joined another caller's transfer.
        var joined: Bool
    }

    struct Caller {
        var continuation: CheckedContinuation<Outcome, any Error>
        var leads: Bool
    }

    /// Tells this transfer apart from a later one under the same key.
    var token: UInt64
    var callers: [UInt64: Caller]
    var task: Task<Void, Never>?
}

extension RequestQueue {
    /// The key under which `request` may share a transfer, or `nil` when it must not share.
    ///
    /// Whatever the key, calls with different credentials (``CredentialScope``, as the request
    /// carries them when it reaches the queue) or identities (``Limits/identityHeaderNames``) never
    /// share: a keyed fingerprint of them ends every key, under the queue's own random secret.
    /// With `automaticAllowed` false (network middleware below the queue), only a key the caller
    /// gives shares.
    func sharingKey(
        for request: HTTPRequest, _ deduplication: Deduplication, context: RequestContext, automaticAllowed: Bool = true
    ) -> String? {
        guard limits.deduplicates else { return nil }
        var key: String
        switch deduplication {
        case .never:
            return nil
        case .key(let given):
            key = "key:" + given
        case .automatic:
            guard automaticAllowed, request.method == .get || request.method == .head else { return nil }
            key = "\(request.method.rawValue) \(request.scheme ?? "") \(request.authority ?? "") \(request.path ?? "")"
            for field in request.headerFields where limits.varyingHeaderNames.contains(field.name.canonicalName) {
                key += "\n\(field.name.canonicalName): \(field.value)"
            }
        }
        if let fingerprint = CredentialScope.fingerprint(
            of: request.headerFields, secretNames: context.secretHeaderNames, identityNames: limits.identityHeaderNames,
            key: credentialKey)
        {
            key += "\ncredentials: " + fingerprint
        }
        // A shared body is read up to the first caller's limit: only calls with the same limit share.
        key += "\nlimit: \(context.maxResponseBytes)"
        return key
    }

    /// Runs `work` once for every caller that asks with the same key while it is in flight.
    ///
    /// The first caller starts `work` in a task of its own; later callers join it. A caller that
    /// is cancelled leaves at once with ``NetworkError/Kind/cancelled``; when the last caller
    /// leaves, the task is cancelled. When `work` ends, every caller still there gets its result
    /// and the key is free for a new transfer.
    /// - Parameters:
    ///   - key: From ``sharingKey(for:_:)``.
    ///   - onJoin: Called when this caller joins a transfer already in flight.
    ///   - context: This caller's context: its deadline makes it leave, as cancellation does.
    ///   - work: The transfer, run once.
    func share(
        key: String, onJoin: (@Sendable () -> Void)?, context: RequestContext,
        _ work: @escaping @Sendable () async throws -> (HTTPResponse, Data)
    ) async throws -> SharedTransfer.Outcome {
        let id = state.withLock { $0.makeID() }
        return try await context.withCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SharedTransfer.Outcome, any Error>) in
                enum Role { case cancelled, lead, join }
                let role = state.withLock { state -> Role in
                    if context.isCancelled { return .cancelled }
                    if state.shared[key] != nil {
                        state.shared[key]?.callers[id] = SharedTransfer.Caller(continuation: continuation, leads: false)
                        return .join
                    }
                    state.shared[key] = SharedTransfer(
                        token: id, callers: [id: SharedTransfer.Caller(continuation: continuation, leads: true)], task: nil)
                    return .lead
                }
                switch role {
                case .cancelled:
                    continuation.resume(throwing: NetworkError.cancelled(phase: .queued))
                case .join:
                    onJoin?()
                case .lead:
                    let task = Task {
                        let result: Result<(HTTPResponse, Data), any Error>
                        do {
                            result = .success(try await work())
                        } catch {
                            result = .failure(error)
                        }
                        self.finishShared(key: key, token: id, result)
                    }
                    let orphaned = state.withLock { state -> Bool in
                        guard state.shared[key]?.token == id else { return true }
                        state.shared[key]?.task = task
                        return false
                    }
                    // Every caller left before the task was attached: nobody wants the transfer.
                    if orphaned { task.cancel() }
                }
            }
        } onCancel: { [self] in
            let (caller, task) = state.withLock { state -> (SharedTransfer.Caller?, Task<Void, Never>?) in
                guard let caller = state.shared[key]?.callers.removeValue(forKey: id) else { return (nil, nil) }
                guard state.shared[key]?.callers.isEmpty == true else { return (caller, nil) }
                let task = state.shared.removeValue(forKey: key)?.task
                return (caller, task)
            }
            caller?.continuation.resume(throwing: NetworkError.cancelled(phase: .transfer))
            task?.cancel()
        }
    }

    private func finishShared(key: String, token: UInt64, _ result: Result<(HTTPResponse, Data), any Error>) {
        let callers = state.withLock { state -> [SharedTransfer.Caller] in
            guard state.shared[key]?.token == token, let transfer = state.shared.removeValue(forKey: key) else { return [] }
            return Array(transfer.callers.values)
        }
        for caller in callers {
            caller.continuation.resume(
                with: result.map { SharedTransfer.Outcome(head: $0.0, body: $0.1, joined: !caller.leads) })
        }
    }
}
