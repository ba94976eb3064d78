import Courier
import CourierTestServer
import Foundation
import Synchronization

/// Counts how each call of a soak run ended, and notices a call that ended twice.
final class SoakTally: Sendable {
    struct State {
        var started = 0
        /// How many times each call's completion ran, by call number.
        var endings: [Int: Int] = [:]
        var completed = 0
        var completedTwice = 0
        var succeeded = 0
        var failed: [String: Int] = [:]
        /// The first message of each kind of failure.
        var examples: [String: String] = [:]
        var deduplicated = 0
        var retried = 0
        /// Called when a call completes for the first time.
        var onComplete: (@Sendable () -> Void)?
    }

    let state = Mutex(State())

    /// Records that call `number` started.
    func started(_ number: Int) {
        state.withLock {
            $0.started += 1
            $0.endings[number] = 0
        }
    }

    /// Records call `number`'s completion.
    func completed(_ number: Int, _ result: Result<Data, NetworkError>, metrics: RequestMetrics?) {
        let notify: (@Sendable () -> Void)? = state.withLock { state -> (@Sendable () -> Void)? in
            let before = state.endings[number, default: 0]
            state.endings[number] = before + 1
            guard before == 0 else {
                state.completedTwice += 1
                return nil
            }
            state.completed += 1
            switch result {
            case .success(let data):
                if data.count == SoakServer.bodyBytes {
                    state.succeeded += 1
                } else {
                    state.failed["wrong_body", default: 0] += 1
                }
            case .failure(let error):
                state.failed[error.kind.description, default: 0] += 1
                if state.examples[error.kind.description] == nil {
                    let code = error.nativeCode.map { " (\($0.domain) \($0.code))" } ?? ""
                    state.examples[error.kind.description] = "\(error.phase): \(error.message)\(code)"
                }
            }
            if metrics?.deduplicated == true { state.deduplicated += 1 }
            if let attempts = metrics?.attempts, attempts > 1 { state.retried += 1 }
            return state.onComplete
        }
        notify?()
    }

    /// Calls that started and have not completed.
    var pending: Int { state.withLock { $0.started - $0.completed } }
}
