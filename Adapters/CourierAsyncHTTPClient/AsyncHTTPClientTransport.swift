#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOSSL

    /// The transport on swift-server's AsyncHTTPClient (SwiftNIO), registered as `ahc`.
    ///
    /// For services already on SwiftNIO, and as a reference point for the other transports. Built
    /// only with the package trait `AsyncHTTPClient` (`swift build --traits AsyncHTTPClient`), so
    /// users of the other transports never compile SwiftNIO's client.
    ///
    /// ```swift
    /// let transport = try AsyncHTTPClientTransport()
    /// let client = try NetworkClient(configuration: .init(baseURL: "https://api.example.com"), transport: transport)
    /// // ...
    /// await client.shutdown()
    /// ```
    ///
    /// What Courier adds on top of AsyncHTTPClient:
    /// - One exchange per call: AsyncHTTPClient's redirect handling is off, and the chain's
    ///   follow-up link applies Courier's redirect policy (see `FollowUp`).
    /// - A failed connection attempt fails the call at once instead of being retried until the
    ///   deadline, so "connection refused" reads the same as on every other transport.
    /// - Errors become `NetworkError` kinds shared by every transport.
    ///
    /// Limits: cleartext HTTP/2 with prior knowledge is not supported (`NetworkError/Kind/unsupported`);
    /// phase timings are not reported (metrics say `.unavailable`).
    public final class AsyncHTTPClientTransport: Transport {
        /// The registered name, `ahc` by default.
        public var name: String { configuration.name }
        /// The settings this transport was made with.
        public let configuration: Configuration
        /// The configuration's ``Configuration/stallTimeout``: long transfers' bodies are bounded by it.
        public var stallLimit: Duration? { configuration.stallTimeout }

        /// The connection pools of one route (direct, or through one proxy): AsyncHTTPClient sets a
        /// proxy per client, not per request.
        private struct Pools: Sendable {
            /// HTTP/2 where ALPN offers it, else HTTP/1.1.
            let automatic: HTTPClient
            /// HTTP/1.1 only, for calls (or clients) that ask for it.
            let http1: HTTPClient
        }
        /// The pools of calls that connect directly.
        private let direct: Pools
        /// The pools of calls through each proxy the configuration names. Each pool keeps its own
        /// connections, so ``Configuration/maxConnectionsPerHost`` holds per pool: a host reached
        /// both directly and through a proxy (a redirect across) may have twice as many.
        private let proxied: [ProxyServer: Pools]
        private let isShutDown = Locked(false)

        /// Every client, for shutting down.
        private var clients: [HTTPClient] {
            ([direct] + proxied.values).flatMap { [$0.automatic, $0.http1] }
        }

        /// Creates a transport and its connection pools (on SwiftNIO's shared event loops).
        /// - Parameter configuration: Limits, HTTP version, extra trusted roots.
        /// - Throws: `ConfigurationError` naming the key of a value out of range.
        public init(configuration: Configuration = Configuration()) throws(ConfigurationError) {
            try configuration.validate()
            self.configuration = configuration
            var tls = TLSConfiguration.makeClientConfiguration()
            // TLS 1.2 at least (SwiftNIO SSL's default accepts 1.0).
            tls.minimumTLSVersion = .tlsv12
            if let caPEM = configuration.caPEM, let roots = try? NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)) {
                tls.additionalTrustRoots.append(.certificates(roots))
            }
            if let caFile = configuration.caFile {
                tls.additionalTrustRoots.append(.file(caFile))
            }
            if let certificateFile = configuration.clientCertificateFile, let keyFile = configuration.clientKeyFile {
                guard let chain = try? NIOSSLCertificate.fromPEMFile(certificateFile), !chain.isEmpty else {
                    throw ConfigurationError(
                        key: "ahc.clientCertificateFile", value: certificateFile, allowed: "a file of PEM certificates", source: "code")
                }
                guard let key = try? NIOSSLPrivateKey(file: keyFile, format: .pem) else {
                    throw ConfigurationError(key: "ahc.clientKeyFile", value: keyFile, allowed: "a PEM private key", source: "code")
                }
                tls.certificateChain = chain.map { .certificate($0) }
                tls.privateKey = .privateKey(key)
            }
            var settings = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
            settings.timeout = HTTPClient.Configuration.Timeout(
                connect: Self.timeAmount(configuration.connectTimeout), read: Self.timeAmount(configuration.stallTimeout))
            settings.connectionPool = HTTPClient.Configuration.ConnectionPool(
                idleTimeout: Self.timeAmount(configuration.idleTimeout),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maxConnectionsPerHost)
            settings.connectionPool.retryConnectionEstablishment = false
            // AsyncHTTPClient 1.37 starts a client span of its own for every request (with the
            // tracer bootstrapped at the time). Courier's `TracingMiddleware` owns the call's span,
            // so a call gets one span, not two siblings.
            settings.tracing.tracer = nil
            // The address overrides: AsyncHTTPClient connects to the address and keeps the host
            // name for `Host` and TLS.
            // AsyncHTTPClient looks the URL's host up as written: the name with a trailing dot too.
            for (host, address) in configuration.connectionOverrides.addresses {
                let target = address.hasPrefix("[") ? String(address.dropFirst().dropLast()) : address
                settings.dnsOverride[host] = target
                settings.dnsOverride[host + "."] = target
            }
            func pools(through proxy: ProxyServer?) -> Pools {
                var settings = settings
                settings.proxy = proxy.map { proxy in
                    // Tunnelled with CONNECT, plain http too: AsyncHTTPClient does not forward.
                    let host = proxy.host.hasPrefix("[") ? String(proxy.host.dropFirst().dropLast()) : proxy.host
                    let credentials = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
                    return .server(host: host, port: proxy.port, authorization: credentials)
                }
                settings.httpVersion = .automatic
                let automatic = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
                settings.httpVersion = .http1Only
                return Pools(
                    automatic: automatic, http1: HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings))
            }
            direct = pools(through: nil)
            var proxied: [ProxyServer: Pools] = [:]
            for proxy in [configuration.proxy.httpProxy, configuration.proxy.httpsProxy].compactMap({ $0 }) where proxied[proxy] == nil {
                proxied[proxy] = pools(through: proxy)
            }
            self.proxied = proxied
        }

        deinit {
            // `shutdown()` is the way to stop; this only keeps a forgotten transport from leaking.
            if !isShutDown.withLock({ $0 }) {
                let clients = clients
                Task { for client in clients { try? await client.shutdown() } }
            }
        }

        /// Sends the request through AsyncHTTPClient; see `Transport/send(_:body:context:)`.
        public func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
            guard !isShutDown.withLock({ $0 }) else {
                throw NetworkError(kind: .transportFailure, phase: .sending, message: "the AsyncHTTPClient transport was shut down")
            }
            let version = context.httpVersion ?? configuration.httpVersion
            if version == .http2PriorKnowledge {
                throw NetworkError(
                    kind: .unsupported, phase: .building,
                    message: "AsyncHTTPClient does not speak cleartext HTTP/2 with prior knowledge; use HTTP/2 over TLS or HTTP/1.1")
            }
            let overrides = configuration.connectionOverrides
            if request.scheme?.lowercased() == "https", overrides.unixSocket != nil || overrides.address(for: request) != nil {
                // Over a socket it has no name to verify; at an overridden address SwiftNIO SSL would
                // take a certificate for that address whatever the name.
                throw NetworkError(
                    kind: .unsupported, phase: .building,
                    message: "AsyncHTTPClient cannot verify the server's name over a Unix socket or an address override; "
                        + "use http, or the curl transport")
            }
            let proxy = configuration.proxy.server(for: request)
            let pools = proxy.flatMap { proxied[$0] } ?? direct
            let client = version == .http1_1 ? pools.http1 : pools.automatic
            if context.isCancelled { throw CancellationError() }
            let response = try await execute(request, body: body, on: client, through: proxy, context: context)
            context.recorder.enter(.receiving)
            return TransportResponse(head: Self.head(of: response), body: Self.body(of: response, context: context))
        }

        private func execute(
            _ request: HTTPRequest, body: RequestBody?, on client: HTTPClient, through proxy: ProxyServer?, context: RequestContext
        ) async throws -> HTTPClientResponse {
            let outgoing = Self.request(
                request, body: body, unixSocket: configuration.connectionOverrides.unixSocket, context: context)
            context.recorder.enter(body == nil ? .awaitingResponse : .sending)
            let remaining = context.transferRemaining
            guard remaining > .zero else {
                throw NetworkError(kind: .timedOut, phase: .building, message: "the deadline passed before the request was sent")
            }
            do {
                // AsyncHTTPClient stops only on Task cancellation: the call's deadline cancels the
                // child this runs in. Its own deadline is the backstop on the real clock.
                let response = try await context.interruptible {
                    // The call's logger (with its request id), so AsyncHTTPClient's own lines join the call's;
                    // none when it would drop them (AsyncHTTPClient logs only at debug and trace).
                    try await client.execute(outgoing, deadline: .now() + Self.timeAmount(remaining), logger: context.debugLogger)
                }
                // A body written at once has gone by the answer; a streamed one counted itself.
                if context.countsProgress, let data = body?.bufferedData { context.reportBytesSent(Int64(data.count)) }
                context.recorder.update {
                    $0.httpVersion = response.version.major == 2 ? "2" : "\(response.version.major).\(response.version.minor)"
                    $0.phaseTimings = .unavailable(reason: "AsyncHTTPClient does not report phase timings")
                }
                return response
            } catch {
                // AsyncHTTPClient writes a request without a body, or with a buffered one, at once; a
                // streamed body in parts.
                throw AsyncHTTPClientErrorMapping.error(
                    error, phase: context.recorder.phase, writtenAtOnce: body == nil || body?.bufferedData != nil, proxy: proxy)
            }
        }

        /// Stops both connection pools; calls in flight fail and later calls are refused.
        ///
        /// Returns within ``shutdownGrace`` even when a pool is still waiting for a connection
        /// attempt: AsyncHTTPClient 1.37 cannot cancel one (its pool keeps a connection that is
        /// starting until the attempt ends, at the connect timeout), so a call that timed out while
        /// connecting would otherwise hold `shutdown()` up for the rest of that timeout. The pools
        /// finish stopping in the background; they keep their clients until then.
        public func shutdown() async {
            let first = isShutDown.withLock { done in
                defer { done = true }
                return !done
            }
            guard first else { return }
            let clients = clients
            let stopping = Task {
                await withTaskGroup(of: Void.self) { group in
                    for client in clients { group.addTask { try? await client.shutdown() } }
                }
            }
            await Self.wait(for: stopping, atMost: Self.shutdownGrace)
        }

        /// The longest ``shutdown()`` waits for the connection pools to stop.
        public static let shutdownGrace: Duration = .seconds(1)

        /// Waits until `task` ends or `limit` passes, whichever comes first.
        private static func wait(for task: Task<Void, Never>, atMost limit: Duration) async {
            let waiter = Locked<CheckedContinuation<Void, Never>?>(nil)
            let resume: @Sendable () -> Void = { waiter.withLock { $0.take() }?.resume() }
            await withCheckedContinuation { continuation in
                waiter.withLock { $0 = continuation }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    resume()
                }
                Task {
                    await task.value
                    timer.cancel()
                    resume()
                }
            }
        }

        /// The characters a socket path keeps in AsyncHTTPClient's `http+unix` host: ASCII letters and
        /// digits; everything else is percent-encoded.
        private static let socketPathCharacters = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

        private static func request(
            _ request: HTTPRequest, body: RequestBody?, unixSocket: String?, context: RequestContext
        ) -> HTTPClientRequest {
            var outgoing = HTTPClientRequest(url: request.urlText)
            if let unixSocket {
                // AsyncHTTPClient's form: the socket's path, percent-encoded, as the host; the
                // URL's own host goes in `Host`.
                let socket = unixSocket.addingPercentEncoding(withAllowedCharacters: Self.socketPathCharacters) ?? unixSocket
                outgoing = HTTPClientRequest(url: "http+unix://\(socket)\(request.path ?? "/")")
                outgoing.headers.add(name: "Host", value: request.authority ?? "localhost")
            }
            outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
            for field in request.headerFields {
                outgoing.headers.add(name: field.name.rawName, value: field.value)
            }
            if let body, body.streamSource != nil || (body.length ?? 0) > 0 {
                if let data = body.bufferedData {
                    outgoing.body = .bytes(ByteBuffer(bytes: data))
                } else {
                    // AsyncHTTPClient pulls the next chunk only when the channel can take it.
                    let length: HTTPClientRequest.Body.Length = body.length.map { .known($0) } ?? .unknown
                    if context.countsProgress {
                        // Counted as AsyncHTTPClient pulls each chunk: what it has taken to write.
                        let sent = Locked<Int64>(0)
                        let chunks = body.chunks().map { chunk in
                            context.reportBytesSent(
                                sent.withLock {
                                    $0 += Int64(chunk.count)
                                    return $0
                                })
                            return ByteBuffer(bytes: chunk)
                        }
                        outgoing.body = .stream(chunks, length: length)
                    } else {
                        outgoing.body = .stream(body.chunks().map { ByteBuffer(bytes: $0) }, length: length)
                    }
                }
            }
            return outgoing
        }

        private static func head(of response: HTTPClientResponse) -> HTTPResponse {
            var fields = HTTPFields()
            for (name, value) in response.headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            return HTTPResponse(
                status: .init(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase), headerFields: fields)
        }

        private static func body(of response: HTTPClientResponse, context: RequestContext) -> ResponseBody {
            let expected = response.headers.first(name: "content-length").flatMap { Int64($0) }
            let reader = BodyReader(response.body.makeAsyncIterator())
            // Each read in a child the call's deadline can cancel (see `execute`).
            let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await context.interruptible { try await reader.next() } })
            return ResponseBody(stream: stream, expectedLength: expected)
        }

        static func timeAmount(_ duration: Duration) -> TimeAmount {
            let (seconds, attoseconds) = duration.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Reads the response body for the one consumer of the stream (never two `next()` at once).
    private final class BodyReader: @unchecked Sendable {
        // @unchecked Sendable: `AsyncThrowingStream(unfolding:)` calls `next()` one at a time.
        private var iterator: HTTPClientResponse.Body.AsyncIterator

        init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
            self.iterator = iterator
        }

        func next() async throws -> Data? {
            do {
                guard let buffer = try await iterator.next() else { return nil }
                return Data(buffer.readableBytesView)
            } catch {
                throw AsyncHTTPClientErrorMapping.error(error, phase: .receiving)
            }
        }
    }

    extension AsyncHTTPClientTransport {
        /// Checks that this transport runs with every transport setting `client` sets, and with its
        /// connect timeout when that is not the default (see `Transport/checkSettings(of:)`): the
        /// ones AsyncHTTPClient cannot honour are refused, naming the key, and the others must
        /// match the values the transport was made with.
        /// - Parameter client: The client configuration.
        /// - Throws: `ConfigurationError` naming the first key whose value differs.
        public func checkSettings(of client: ClientConfiguration) throws(ConfigurationError) {
            // The values AsyncHTTPClient cannot honour, refused with their reasons.
            let wanted = try configuration.applying(client)
            if configuration.connectTimeout != wanted.connectTimeout {
                throw ClientConfiguration.notCarriedOut(ConfigurationKey.timeoutsConnect.name, by: name)
            }
            try client.transportSettings.check(running: runningSettings ?? TransportSettings(), honoured: honouredSettingKeys, by: name)
        }

        /// What this transport runs with, in the core's terms.
        public var runningSettings: TransportSettings? {
            var settings = TransportSettings()
            settings.httpVersion = configuration.httpVersion
            settings.maxConnectionsPerHost = configuration.maxConnectionsPerHost
            settings.stallTimeout = configuration.stallTimeout
            settings.tls.caFile = configuration.caFile
            settings.tls.caPEM = configuration.caPEM
            settings.tls.clientCertificateFile = configuration.clientCertificateFile
            settings.tls.clientKeyFile = configuration.clientKeyFile
            settings.proxy = configuration.proxy
            settings.connectionOverrides = configuration.connectionOverrides
            return settings
        }

        /// Every transport setting but a total connection limit and a public key pin, which
        /// AsyncHTTPClient does not have.
        public var honouredSettingKeys: Set<String> {
            Set(TransportSettings.allKeys).subtracting([
                ConfigurationKey.connectionsMaxTotal.name, ConfigurationKey.tlsPinnedPublicKey.name,
            ])
        }
    }

    /// Found by the core when this module is linked with the `AsyncHTTPClient` trait (see
    /// `TransportRegistry.linked`).
    package enum LinkedEntry: LinkedTransport {
        package static var entry: TransportRegistry.Entry { .asyncHTTPClient() }
    }

    extension TransportRegistry.Entry {
        /// Registers AsyncHTTPClient under the name `ahc`; each client gets its own transport. The
        /// client configuration's connect timeout and transport settings apply (see
        /// ``AsyncHTTPClientTransport/Configuration/applying(_:)``).
        /// - Parameter configuration: The transport's settings.
        /// - Returns: The entry.
        public static func asyncHTTPClient(_ configuration: AsyncHTTPClientTransport.Configuration = .init()) -> TransportRegistry.Entry {
            TransportRegistry.Entry(name: configuration.name) { client in
                try AsyncHTTPClientTransport(configuration: configuration.applying(client))
            }
        }
    }
#endif
