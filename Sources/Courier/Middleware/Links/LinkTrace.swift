#if DEBUG
    import Synchronization

    /// The steps a call passed through the chain, in order, recorded only in debug builds and only
    /// while a test sets ``current``: how `MiddlewareChainTests` checks ``NetworkClient/linkOrder``
    /// against what a call actually runs. A release build has no trace and no check for one.
    final class LinkTrace: Sendable {
        /// The trace of the calls made in this task, when a test asks for one.
        @TaskLocal static var current: LinkTrace?

        private let recorded = Mutex<[String]>([])

        /// The steps passed so far.
        var steps: [String] { recorded.withLock { $0 } }

        /// Records that the current call passed `step`, when a trace is on.
        static func pass(_ step: @autoclosure () -> String) {
            guard let trace = current else { return }
            let name = step()
            trace.recorded.withLock { $0.append(name) }
        }
    }
#endif
