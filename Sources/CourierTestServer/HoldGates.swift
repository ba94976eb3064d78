import NIOConcurrencyHelpers

/// Named gates for the `/hold/{name}` route: a request waits at its gate until a test opens it.
///
/// An open gate stays open, so a request that arrives after ``open(_:)`` passes at once and a
/// test never races the request it releases.
final class HoldGates: Sendable {
    private struct State {
        var open: Set<String> = []
        var waiting: [String: [@Sendable () -> Void]] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Calls `resume` once `name` is open: at once when it is open already.
    func wait(at name: String, resume: @escaping @Sendable () -> Void) {
        let isOpen = state.withLockedValue { state in
            if state.open.contains(name) { return true }
            state.waiting[name, default: []].append(resume)
            return false
        }
        if isOpen { resume() }
    }

    /// Opens `name`, resuming every request waiting there.
    func open(_ name: String) {
        let resumes = state.withLockedValue { state in
            state.open.insert(name)
            return state.waiting.removeValue(forKey: name) ?? []
        }
        for resume in resumes { resume() }
    }
}
