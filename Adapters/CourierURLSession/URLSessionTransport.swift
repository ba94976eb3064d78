import Courier
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport on the toolchain's own URLSession (FoundationNetworking on Linux).
///
/// Use it when you want no extra dependency. It streams response bodies, bridges Task
/// cancellation to the `URLSessionTask`, and maps `URLError` codes to precise `NetworkError`
/// kinds. Its delegate declines every redirect, so the chain's follow-up link applies Courier's
/// redirect policy (see `FollowUp`), as for every transport.
///
/// What it cannot do on Linux, and says so rather than pretending:
/// - phase timings: metrics carry `.unavailable` (FoundationNetworking never reports
///   `URLSessionTaskMetrics` on Linux);
/// - a separate connect timeout: its idle timeout (the stall limit) bounds connecting too;
/// - repeated response headers: URLSession joins them into one comma-separated value;
/// - backpressure: a body arrives as fast as the network delivers it and waits in memory for a
///   slow consumer (FoundationNetworking offers no way to pause a task), up to
///   `Configuration/maxUnreadBytes` (16 MiB): a reader further behind stops the transfer and gets
///   `NetworkError/Kind/connectionClosed` after the bytes that arrived;
/// - `1xx` interim responses: FoundationNetworking takes one for the final response, so such a
///   call fails at once as `NetworkError/Kind/unsupported`;
/// - TLS settings, a total connection limit and an HTTP version choice: a client configuration
///   that sets them is refused at start-up, naming the key;
/// - raw compressed bodies: FoundationNetworking always asks for and decodes gzip and deflate, so
///   a call that sets its own `Accept-Encoding` still gets the body decoded, and a gzip stream cut
///   short ends quietly (the call gets the part that arrived). The chain still refuses unknown or
///   too many codings and holds the body to `Decompression/maxRatio` against the announced length.
///
/// **A hostile or broken server can crash a process that uses this transport.** FoundationNetworking
/// traps (a fatal error Courier cannot catch) on at least three answers, with the toolchain this
/// release was tested on (Swift 6.3.1):
/// - a response that is a status line and nothing else, the connection then closed
///   (`NativeProtocol.swift: Transfer completed, but there's no response`);
/// - a valid chunked response with trailer fields after its body (the same message);
/// - a redirect whose `Location` is protocol-relative to an IPv6-mapped host, such as
///   `//[::ffff:127.0.0.1]:8080/x` (`HTTPURLProtocol.swift: Invalid URL`, in `redirectRequest`,
///   before any delegate is asked).
///
/// Use the curl or ahc transport for peers your service does not control. `URLSessionCrashTests`
/// checks in a child process that each still crashes, so this note goes when a toolchain fixes them.
///
/// Multipart bodies with file parts are staged to a temporary file (streamed from disk, never
/// held whole in memory) and uploaded from it.
public final class URLSessionTransport: Transport {
    /// Settings of the underlying session.
    public struct Configuration: Sendable {
        /// The most connections to one host; 16 by default.
        public var maxConnectionsPerHost = 16
        /// The name reported in metrics; `urlsession` by default.
        public var name = "urlsession"
        /// How long a transfer may go without a byte before it fails as
        /// `NetworkError/Kind/timedOut` (URLSession's `timeoutIntervalForRequest`, an idle
        /// timeout); 30 s by default.
        public var stallTimeout: Duration = ClientConfiguration.defaultStallTimeout
        /// The most bytes of a streamed body that may wait for a slow reader (a body read whole
        /// may hold up to its cap): 16 MiB by default, at least ``minUnreadBytes``. FoundationNetworking delivers a body as fast as the network does
        /// and cannot pause, so a reader that falls further behind (or one that reads a line or an
        /// event past its cap while the rest keeps coming) stops the transfer: the reader gets
        /// what arrived, then `NetworkError/Kind/connectionClosed` naming this limit (a download
        /// then resumes with `Range`, an event stream reconnects).
        public var maxUnreadBytes = 16 << 20
        /// The least ``maxUnreadBytes`` taken: 1 MiB (a smaller value counts as this).
        public static let minUnreadBytes = 1 << 20

        /// The defaults.
        public init() {}

        /// This configuration with the client configuration's transport settings on top.
        ///
        /// FoundationNetworking offers no HTTP version choice, no total connection limit and no
        /// TLS settings (it cannot trust a private CA): those settings make it refuse to start,
        /// naming the key, rather than be ignored.
        /// - Parameter client: The client configuration.
        /// - Returns: The combined configuration.
        /// - Throws: `ConfigurationError` for a setting URLSession cannot honour.
        public func applying(_ client: ClientConfiguration) throws(ConfigurationError) -> Self {
            var combined = self
            if let version = client.httpVersion, version != .http2 {
                throw ClientConfiguration.unsupported(
                    ConfigurationKey.httpVersion.name, value: "\(version)", by: name,
                    "URLSession on Linux picks the version itself (HTTP/2 where TLS offers it); use curl or ahc to choose")
            }
            if let limit = client.maxConnections {
                throw ClientConfiguration.unsupported(
                    ConfigurationKey.connectionsMaxTotal.name, value: "\(limit)", by: name,
                    "URLSession limits connections per host only (connections.maxPerHost)")
            }
            if let limit = client.maxConnectionsPerHost { combined.maxConnectionsPerHost = limit }
            if let stall = client.stallTimeout { combined.stallTimeout = stall }
            if let key = client.tls.setKeys.first {
                throw ClientConfiguration.unsupported(
                    key, by: name,
                    "FoundationNetworking on Linux offers no TLS settings (no private CA, client certificate or pin); use curl or ahc")
            }
            if let key = client.connectionOverrides.setKeys.first {
                throw ClientConfiguration.unsupported(
                    key, by: name, "FoundationNetworking on Linux connects only to the URL's host; use curl or ahc")
            }
            if let problem = Self.proxyProblem(client.proxy, environment: ProcessInfo.processInfo.environment, by: name) {
                throw problem
            }
            return combined
        }

        /// Why URLSession cannot send calls the way `proxy` says, or `nil`. FoundationNetworking
        /// has no proxy setting: its libcurl follows `http_proxy`, `https_proxy`, `all_proxy` and
        /// `no_proxy` from the environment. So the one configuration it honours is the one the
        /// environment makes (``ProxyConfiguration/environment(_:)``): no proxy when none is set,
        /// or `proxy: environment`.
        /// - Parameters:
        ///   - proxy: The client's proxies.
        ///   - environment: The process environment.
        ///   - name: The transport's name, for the error.
        /// - Returns: The error naming `proxy`.
        static func proxyProblem(_ proxy: ProxyConfiguration, environment: [String: String], by name: String) -> ConfigurationError? {
            let key = ConfigurationKey.proxy.name
            let followed: ProxyConfiguration
            do {
                followed = try ProxyConfiguration.environment(environment)
            } catch {
                return ClientConfiguration.unsupported(
                    key, by: name,
                    "FoundationNetworking's libcurl would follow \(error.variable ?? "a proxy variable") from the environment, "
                        + "which Courier cannot read (\(error.allowed)); unset it, or use curl or ahc")
            }
            // The exclusions matter only where there is a proxy to exclude from.
            if !followed.isNone, let entry = URLSessionNoProxy.entryReadOtherwise(in: followed.noProxy, environment: environment) {
                return ClientConfiguration.unsupported(
                    key, value: entry, by: name,
                    "FoundationNetworking's libcurl reads the no_proxy entry '\(entry)' otherwise than Courier "
                        + "(no wildcards but * alone, IPv4 as a.b.c.d[/1-32], IPv6 as ::1), so a call could go another way "
                        + "than Courier reports; write it so, or use curl or ahc")
            }
            let sameServers = proxy.httpProxy == followed.httpProxy && proxy.httpsProxy == followed.httpsProxy
            if sameServers, proxy.isNone || proxy.noProxy == followed.noProxy { return nil }
            if proxy.isNone {
                return ClientConfiguration.unsupported(
                    key, value: "none", by: name,
                    "FoundationNetworking's libcurl follows the environment's proxy variables and cannot be told not to; "
                        + "unset them, set proxy to environment, or use curl or ahc")
            }
            return ClientConfiguration.unsupported(
                key, by: name,
                "FoundationNetworking on Linux has no proxy setting: only the environment's proxies (proxy: environment) work; "
                    + "use curl or ahc")
        }
    }

    /// The registered name, `urlsession` by default.
    public var name: String { configuration.name }

    /// FoundationNetworking always asks for and decodes gzip and deflate (and br and zstd when its
    /// libcurl has them): the chain checks the codings and the ratio, and decodes nothing again.
    public var decodesContentCodings: Bool { true }
    /// `HTTPURLResponse` joins a response's repeated fields (`Set-Cookie` among them) with commas,
    /// so a client on this transport keeps no cookies (`CourierCookies` refuses them at start).
    public var joinsRepeatedResponseFields: Bool { true }
    /// The settings this transport was made with.
    public let configuration: Configuration
    /// The configuration's ``Configuration/stallTimeout``: long transfers' bodies are bounded by it.
    public var stallLimit: Duration? { configuration.stallTimeout }

    /// The session, until ``shutdown()`` takes it. Tasks are made, and the session invalidated,
    /// only on `queue`, so no task reaches FoundationNetworking after the session was
    /// invalidated (it traps there); the lock is never held while FoundationNetworking runs.
    private let session: Locked<URLSession?>
    private let delegate: SessionDelegate
    /// Where every FoundationNetworking call that waits on its work queue runs (making, resuming
    /// and cancelling tasks, invalidating), and where the delegate's callbacks arrive: a serial
    /// queue of this transport's own, whose thread Dispatch adds when it blocks. FoundationNetworking
    /// does all its work for every session in the process on one queue, which a hostile answer
    /// can hold for seconds (10,000 header lines parse in quadratic time there); a wait for it on
    /// a thread of Swift's cooperative pool, or of FoundationNetworking's default delegate queue
    /// (the same threads), stalled every task in the process, on every transport.
    private let queue: DispatchQueue

    /// The error of a call made after ``shutdown()``.
    static let shutDownError = NetworkError(kind: .transportFailure, phase: .sending, message: "the URLSession transport was shut down")

    /// Creates a transport with its own session.
    /// - Parameter configuration: Session settings.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let settings = URLSessionConfiguration.ephemeral
        settings.httpMaximumConnectionsPerHost = max(1, configuration.maxConnectionsPerHost)
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.urlCache = nil
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        // No stored credential is ever proposed for a challenge: Courier's middleware decides.
        settings.urlCredentialStorage = nil
        // Courier enforces each call's deadline. URLSession's request timeout is an idle timeout
        // (no byte for that long), which is the stall limit; the resource timeout only bounds
        // what URLSession does on its own.
        settings.timeoutIntervalForRequest = configuration.stallTimeout / .seconds(1)
        settings.timeoutIntervalForResource = 24 * 3600
        let queue = DispatchQueue(label: "courier.urlsession")
        let callbacks = OperationQueue()
        callbacks.maxConcurrentOperationCount = 1
        callbacks.underlyingQueue = queue
        self.queue = queue
        delegate = SessionDelegate(queue: queue)
        session = Locked(URLSession(configuration: settings, delegate: delegate, delegateQueue: callbacks))
    }

    deinit {
        guard let session = session.withLock({ $0 }) else { return }
        let delegate = delegate
        queue.async {
            delegate.closeAll()
            session.finishTasksAndInvalidate()
        }
    }

    /// Sends the request through URLSession; see `Transport/send(_:body:context:)`.
    public func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        guard session.withLock({ $0 != nil }) else { throw Self.shutDownError }
        if context.httpVersion == .http2PriorKnowledge {
            throw NetworkError(
                kind: .unsupported, phase: .building,
                message: "URLSession on Linux does not speak cleartext HTTP/2 with prior knowledge; use HTTP/2 over TLS or HTTP/1.1")
        }
        if context.isCancelled { throw CancellationError() }
        // A request's own timeout replaces the session's idle timeout in FoundationNetworking, so
        // it carries the stall limit (Courier enforces the deadline itself).
        let urlRequest = try URLSessionConversion.urlRequest(
            from: request, timeout: min(context.transferRemaining, configuration.stallTimeout))
        var stagedBody: URL?
        var stagedLength: Int64?
        let make: @Sendable (URLSession) -> URLSessionTask
        if let body, body.streamSource != nil || (body.length ?? 0) > 0 {
            if let data = body.bufferedData {
                make = { $0.uploadTask(with: urlRequest, from: data) }
            } else {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-body-\(UUID().uuidString)")
                try await Self.stage(body, to: file, context: context)
                stagedBody = file
                if context.countsProgress {
                    stagedLength =
                        (try? FileManager.default.attributesOfItem(atPath: file.path))
                        .flatMap { $0[.size] as? NSNumber }?.int64Value
                }
                // A stream over the staged file, read as libcurl sends: `uploadTask(fromFile:)`
                // would have FoundationNetworking read the file ahead into memory.
                guard let stream = InputStream(url: file) else {
                    try? FileManager.default.removeItem(at: file)
                    throw NetworkError.invalidRequest("could not read the staged request body at \(file.path)")
                }
                var streamed = urlRequest
                streamed.httpBodyStream = stream
                make = { [streamed] in $0.dataTask(with: streamed) }
            }
        } else {
            make = { $0.dataTask(with: urlRequest) }
        }
        // The call's task, once made, and its caller: the cancellation and deadline handlers hold
        // only this (not the context, which holds the handlers, nor the task, which holds the
        // session).
        let pending = PendingTask()
        let state = TaskState(
            recorder: context.recorder, maxResponseBytes: context.maxResponseBytes,
            // A body read whole is bounded by its cap already; a streamed one by the read-ahead.
            maxUnreadBytes: context.streamsBody
                ? configuration.maxUnreadBytes : max(configuration.maxUnreadBytes, context.maxResponseBytes),
            stagedBody: stagedBody, waiter: pending.waiter)
        let (delegate, session, queue, staged, recorder) = (delegate, session, queue, stagedBody, context.recorder)
        context.recorder.enter(.awaitingResponse)
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                pending.waiter.wait(continuation)
                queue.async {
                    guard let open = session.withLock({ $0 }) else {
                        if let staged { try? FileManager.default.removeItem(at: staged) }
                        pending.waiter.resume(with: .failure(Self.shutDownError))
                        return
                    }
                    if pending.stopped != nil {
                        // Cancelled, or past its deadline, before its turn: the caller has its
                        // answer already, and no task is made.
                        if let staged { try? FileManager.default.removeItem(at: staged) }
                        return
                    }
                    let task = make(open)
                    delegate.register(task, state)
                    if let stop = pending.made(task) {
                        // Stopped while the task was being made.
                        delegate.stop(task, because: stop)
                    } else {
                        task.resume()
                    }
                }
                // The call's deadline stops the task in any phase, the body's included.
                context.onDeadline { [weak delegate] in
                    let passed = NetworkError.deadlinePassed(phase: recorder.phase)
                    delegate?.stopSoon(pending, because: passed, failure: passed)
                }
            }
        } onCancel: { [weak delegate] in
            delegate?.stopSoon(pending, because: nil, failure: .cancelled(phase: recorder.phase))
        }
        // FoundationNetworking tells no progress of the body it sends: by the answer it has gone.
        if context.countsProgress, let length = body?.length ?? stagedLength { context.reportBytesSent(length) }
        return response
    }

    /// Writes a streamed body to a file on a thread of its own: a large body takes seconds to
    /// write, and blocking a thread of Swift's cooperative pool that long stalls every other
    /// task in the process. Cancelling the calling task stops the write.
    private static func stage(_ body: RequestBody, to file: URL, context: RequestContext) async throws {
        if body.streamSource != nil {
            // A producer's chunks arrive asynchronously: they are written as they come, on the
            // calling task, which the deadline cancels like the caller.
            return try await context.interruptible { () async throws in try await body.save(to: file) }
        }
        final class StopFlag: Sendable {
            let raised = Atomic<Bool>(false)
        }
        let stop = StopFlag()
        try await context.withCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let writer = Thread {
                    do {
                        try body.write(to: file, shouldStop: { stop.raised.load(ordering: .relaxed) })
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                writer.name = "courier urlsession body staging"
                writer.start()
            }
        } onCancel: {
            stop.raised.store(true, ordering: .relaxed)
        }
    }

    /// Fails every call in flight, invalidates the session, and waits (at most about a second)
    /// until FoundationNetworking has freed it, which closes its pooled connections; later calls
    /// fail. Safe to call more than once.
    public func shutdown() async {
        weak var released: URLSession?
        do {
            guard
                let taken = session.withLock({ session -> URLSession? in
                    defer { session = nil }
                    return session
                })
            else { return }
            released = taken
            let delegate = delegate
            // On the queue the tasks are made on: a task being made now is made before this runs,
            // and one asked for later finds no session.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                queue.async {
                    delegate.closeAll()
                    // Not `invalidateAndCancel()`: it walks FoundationNetworking's task registry off
                    // its own queue. `closeAll()` has cancelled every task already.
                    taken.finishTasksAndInvalidate()
                    done.resume()
                }
            }
        }
        // FoundationNetworking closes its connections only when the session is freed: after the
        // cancelled tasks have completed and the invalidation has run on its queues.
        for _ in 0..<200 where released != nil {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension URLSessionTransport {
    /// Checks that this transport runs with every transport setting `client` sets (see
    /// `Transport/checkSettings(of:)`): the ones FoundationNetworking cannot honour are refused,
    /// naming the key, and the others must match the values the transport was made with.
    /// - Parameter client: The client configuration.
    /// - Throws: `ConfigurationError` naming the key.
    public func checkSettings(of client: ClientConfiguration) throws(ConfigurationError) {
        // The values FoundationNetworking cannot honour, refused with their reasons; the proxy by
        // its own rule (only the environment's).
        _ = try configuration.applying(client)
        try client.transportSettings.check(
            running: runningSettings ?? TransportSettings(), honoured: honouredSettingKeys, skipping: [ConfigurationKey.proxy.name],
            by: name)
    }

    /// What this transport runs with, in the core's terms: HTTP/2 where TLS offers it (the one
    /// version `applying` accepts), its connection limit per host and its stall timeout.
    public var runningSettings: TransportSettings? {
        var settings = TransportSettings()
        settings.httpVersion = .http2
        settings.maxConnectionsPerHost = configuration.maxConnectionsPerHost
        settings.stallTimeout = configuration.stallTimeout
        return settings
    }

    /// The HTTP version (`2` only), the connection limit per host and the stall timeout:
    /// FoundationNetworking offers no other.
    public var honouredSettingKeys: Set<String> {
        [ConfigurationKey.httpVersion.name, ConfigurationKey.connectionsMaxPerHost.name, ConfigurationKey.timeoutsStall.name]
    }
}

/// Found by the core when this module is linked (see `TransportRegistry.linked`).
package enum LinkedEntry: LinkedTransport {
    package static var entry: TransportRegistry.Entry { .urlSession() }
}

extension TransportRegistry.Entry {
    /// Registers URLSession under the name `urlsession`; each client gets its own session.
    /// - Parameter configuration: Session settings.
    /// - Returns: The entry.
    public static func urlSession(_ configuration: URLSessionTransport.Configuration = .init()) -> TransportRegistry.Entry {
        TransportRegistry.Entry(name: "urlsession") { client in try URLSessionTransport(configuration: configuration.applying(client)) }
    }
}
