import NIOConcurrencyHelpers

extension FaultServer {
    /// What one request to a scripted path gets (``FaultServer/script(_:_:)``).
    public enum ScriptStep: Sendable, Hashable {
        /// An answer with this status and the body `scripted`, then a close.
        case status(Int)
        /// `200` with the body `scripted`, after this many milliseconds (at most 60,000).
        case slow(milliseconds: Int)
        /// A reset (RST) once the request head has arrived, before any answer.
        case reset
        /// A close (FIN) once the request head has arrived, before any answer.
        case close
        /// A `200` head promising 100,000 bytes, `bytes` of them, then a reset.
        case resetAfter(bytes: Int)
        /// `200` with the body `scripted`, keeping the connection open for the next request (once
        /// this request's body, by its `Content-Length`, has arrived).
        case keepAlive
        /// `200` with the body `scripted` and no `Connection: close`, then a close at once: the
        /// client takes the connection for reusable, as when a server's idle timeout fires.
        case keepAliveThenClose
    }

    /// Scripts a sequence of answers across calls: the requests to `/script/<name>` get `steps` in
    /// order, one each, then `200` with the body `scripted`. Scripting a name again starts over.
    /// Requests with any method count, on any connection.
    ///
    /// ```swift
    /// server.script("flaky", Array(repeating: .status(503), count: 2) + [.reset])
    /// // GET /script/flaky: 503, 503, reset, then 200
    /// ```
    /// - Parameters:
    ///   - name: The path segment after `/script/`.
    ///   - steps: The answers, first to last.
    public func script(_ name: String, _ steps: [ScriptStep]) {
        scripts.set(name, steps)
    }

    /// Connections open now.
    public var connectionsOpen: Int { connections.withLockedValue { $0.open } }
    /// Connections accepted since start.
    public var connectionsOpened: Int { connections.withLockedValue { $0.opened } }

    /// How many requests reached `/script/<name>` since it was scripted.
    public func scriptedRequests(_ name: String) -> Int {
        scripts.requests(name)
    }
}

/// The connections of one ``FaultServer``: open now, and accepted since start.
typealias FaultConnections = NIOLockedValueBox<(open: Int, opened: Int)>

/// The scripted sequences of one test server, by name: each a list of steps played one per
/// request, and how many requests came. ``FaultServer`` and ``HTTP2FaultServer`` each keep one.
final class ScriptBook<Step: Sendable>: Sendable {
    private struct Script {
        var steps: ArraySlice<Step>
        var requests = 0
    }

    private let scripts = NIOLockedValueBox<[String: Script]>([:])

    /// Scripts `name` with `steps`, starting over if it was scripted before.
    func set(_ name: String, _ steps: [Step]) {
        scripts.withLockedValue { $0[name] = Script(steps: steps[...]) }
    }

    /// How many requests reached `name` since it was scripted.
    func requests(_ name: String) -> Int {
        scripts.withLockedValue { $0[name]?.requests ?? 0 }
    }

    /// Counts a request to `name` and returns its step; `nil` once the steps are played (or for a
    /// name never scripted).
    func nextStep(_ name: String) -> Step? {
        scripts.withLockedValue { scripts in
            guard var script = scripts[name] else { return nil }
            script.requests += 1
            let step = script.steps.popFirst()
            scripts[name] = script
            return step
        }
    }
}
