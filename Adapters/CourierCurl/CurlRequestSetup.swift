import CCurl
import Courier

/// Sets the options of an easy handle, in two steps. ``prepare(_:connections:configuration:)``
/// sets what is the same for every transfer of the engine, once per handle. ``configure(_:for:configuration:scratch:)``
/// sets, on every transfer, every option a transfer may set: each to this transfer's value or back
/// to libcurl's default. So a handle reused from the pool carries nothing of its previous transfer,
/// and needs no `curl_easy_reset` (which frees and copies libcurl's default strings again on every
/// transfer). Every `setopt` code is checked; the first failure stops the setup.
enum CurlRequestSetup {
    /// Sets the options every transfer of the engine shares on a new easy handle.
    /// - Parameters:
    ///   - handle: The handle, just made.
    ///   - connections: The engine's socket counter, which opens and closes every socket.
    ///   - configuration: The engine's configuration.
    static func prepare(
        _ handle: CurlHandle, connections: CurlConnections, configuration: CurlTransport.Configuration
    ) throws(CurlCallFailure) {
        let easy = handle.easy
        try long(easy, CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
        // The path goes as the chain checked it (`RequestTarget`): libcurl resolves no dot segment.
        try long(easy, CURLOPT_PATH_AS_IS, 1, "PATH_AS_IS")
        if CurlRuntime.hasProtocolsString {
            try CurlCall.check(
                allowedProtocols.withUTF8Buffer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, $0.baseAddress) }
                }, "curl_easy_setopt(PROTOCOLS_STR)")
        }
        try CurlCall.check(
            ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(handle.errorBuffer)), "setopt(ERRORBUFFER)")
        try CurlCall.check(ccurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "setopt(HEADERFUNCTION)")
        try CurlCall.check(ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "setopt(WRITEFUNCTION)")
        try CurlCall.check(ccurl_easy_setopt_read_callback(easy, curlReadCallback), "setopt(READFUNCTION)")
        try CurlCall.check(ccurl_easy_setopt_prereq_callback(easy, curlPrereqCallback), "setopt(PREREQFUNCTION)")
        // Every socket through the engine's counter (exact open-connection counts, close-on-exec).
        let counter = Unmanaged.passUnretained(connections).toOpaque()
        try CurlCall.check(ccurl_easy_setopt_opensocket(easy, curlOpenSocketCallback, counter), "setopt(OPENSOCKETFUNCTION)")
        try CurlCall.check(ccurl_easy_setopt_closesocket(easy, curlCloseSocketCallback, counter), "setopt(CLOSESOCKETFUNCTION)")
        // A proxy's answer to CONNECT is not the response: the header callback sees only the
        // origin's heads (the first final head is the response; later header lines are trailers).
        try long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1, "SUPPRESS_CONNECT_HEADERS")
        // One exchange per transfer: the chain's follow-up link decides about redirects.
        try long(easy, CURLOPT_FOLLOWLOCATION, 0, "FOLLOWLOCATION")
        try long(easy, CURLOPT_TCP_KEEPALIVE, 1, "TCP_KEEPALIVE")
        // Reads of 64 KiB instead of libcurl's 16 KiB: a quarter of the `recv` and `poll` calls
        // per body (over TLS a read is still one 16 KiB record). 1 MiB bodies, c64, libcurl 7.88,
        // 5 runs each: 10-30% less CPU per call, buffered and streamed. The buffer is 48 KiB more
        // per running transfer before libcurl 8.7 (allocated per transfer), per multi handle from
        // 8.7 on (BENCHMARKS.md, issue 40's third stop).
        try long(easy, CURLOPT_BUFFERSIZE, 64 * 1024, "BUFFERSIZE")
        try long(
            easy,
            CURLOPT_MAXLIFETIME_CONN, max(1, Int(configuration.maxConnectionLifetime.components.seconds)), "MAXLIFETIME_CONN")
        // The stall limit.
        try long(easy, CURLOPT_LOW_SPEED_LIMIT, configuration.stallMinimumBytesPerSecond, "LOW_SPEED_LIMIT")
        try long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(configuration.stallTimeout.components.seconds)), "LOW_SPEED_TIME")
        try configureTLS(easy, configuration.tls)
        // Set on every handle: left unset, libcurl would follow `http_proxy`, `HTTPS_PROXY` and
        // `NO_PROXY` from the environment, which only `ProxyConfiguration.environment(_:)` may
        // decide. With proxies configured, `configure` sets it per transfer.
        try configureProxy(easy, nil)
        if let socket = configuration.connectionOverrides.unixSocket {
            try CurlCall.check(
                socket.withCString { ccurl_easy_setopt_string(easy, CURLOPT_UNIX_SOCKET_PATH, $0) }, "curl_easy_setopt(UNIX_SOCKET_PATH)")
        }
    }

    /// Configures `attempt`'s prepared handle for `transfer`'s request, setting every option a
    /// transfer may set on every transfer (to its value, or back to libcurl's default). The header list it builds is the attempt's from then on
    /// (freed when the attempt is released, also when a later option fails).
    /// - Parameter scratch: A buffer the URL is written into (libcurl copies it), reused from
    ///   call to call so that building it allocates nothing.
    static func configure(
        _ attempt: inout CurlAttempt, for transfer: CurlTransfer, configuration: CurlTransport.Configuration,
        scratch: inout [CChar]
    ) throws(CurlCallFailure) {
        let easy = attempt.easy
        let request = transfer.request
        let user = Unmanaged.passUnretained(transfer).toOpaque()

        writeURL(of: request, into: &scratch)
        try CurlCall.check(
            scratch.withUnsafeBufferPointer { ccurl_easy_setopt_string(easy, CURLOPT_URL, $0.baseAddress) }, "curl_easy_setopt(URL)")
        try pointer(easy, CURLOPT_HEADERDATA, user, "HEADERDATA")
        try pointer(easy, CURLOPT_WRITEDATA, user, "WRITEDATA")
        try pointer(easy, CURLOPT_READDATA, user, "READDATA")
        try pointer(easy, CURLOPT_PREREQDATA, user, "PREREQDATA")

        // HTTP version.
        var pipeWait = 0
        // Compared with the preference's named values (its cases are not public: a version added
        // later must not break a transport's exhaustive switch); HTTP/2 is the rest.
        if transfer.version == .http1_1 {
            try long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1), "HTTP_VERSION")
        } else if transfer.version == .http2PriorKnowledge {
            // No PIPEWAIT: with it, libcurl 8.14 makes every new transfer to the host wait for good
            // ("Waiting on connection to negotiate possible multiplexing") once a stream of an h2c
            // connection was reset or the server sent GOAWAY (`HTTP2FaultTests`). Parallel first
            // requests may open connections side by side instead.
            try long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE), "HTTP_VERSION")
        } else {
            try long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS), "HTTP_VERSION")
            // Waiting to multiplex only pays where HTTP/2 can be negotiated (ALPN over TLS). On
            // plain http:// the connection is HTTP/1.1, and PIPEWAIT made parallel first requests
            // to a host wait for one another instead of opening connections side by side.
            if CurlRuntime.isHTTPS(request.scheme) { pipeWait = 1 }
        }
        try long(easy, CURLOPT_PIPEWAIT, pipeWait, "PIPEWAIT")

        // Timeouts: connect, and the call's remaining time.
        let context = transfer.context
        try long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(context.connectTimeout), "CONNECTTIMEOUT_MS")
        try long(easy, CURLOPT_TIMEOUT_MS, milliseconds(context.transferRemaining), "TIMEOUT_MS")

        // Method and body. libcurl keeps one method per handle, which `NOBODY` (HEAD) and `UPLOAD`
        // (PUT) each set and each setting to 0 turns back into GET, so the order matters.
        let method = request.method
        let body = transfer.body
        let uploads = method != .head && (body != nil || method == .post || method == .put || method == .patch)
        if method == .head {
            try long(easy, CURLOPT_UPLOAD, 0, "UPLOAD")
            try long(easy, CURLOPT_NOBODY, 1, "NOBODY")
        } else {
            try long(easy, CURLOPT_NOBODY, 0, "NOBODY")
            try long(easy, CURLOPT_UPLOAD, uploads ? 1 : 0, "UPLOAD")
        }
        // A stream of unknown length announces -1: libcurl sends it chunked over HTTP/1.1.
        let announced = uploads ? (body?.length ?? (body?.streamSource != nil ? -1 : 0)) : -1
        try CurlCall.check(ccurl_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(announced)), "setopt(INFILESIZE_LARGE)")
        // libcurl sends a request again on its own (an HTTP/2 stream the server refused, or a
        // reused connection that died before any answer) and must then rewind the body. It may
        // only for a request that may be repeated; without a seek callback the rewind fails
        // (`CURLE_SEND_FAIL_REWIND`), so nothing else is ever sent twice.
        let rewinds = uploads && body?.streamSource == nil && RepeatRule.mayRepeat(request, body: body)
        try CurlCall.check(ccurl_easy_setopt_seek(easy, rewinds ? curlSeekCallback : nil, rewinds ? user : nil), "setopt(SEEKFUNCTION)")
        // GET, HEAD and an upload's PUT are libcurl's own methods; every other is named (a GET
        // with a body too, which libcurl would send as PUT).
        let named = uploads ? method == .put : method == .get || method == .head
        try string(easy, CURLOPT_CUSTOMREQUEST, named ? nil : method.rawValue, "CUSTOMREQUEST")

        // Headers, exactly as built; libcurl adds nothing Courier did not ask for but Host, Accept
        // and Content-Length. `Expect:` turns off its 100-continue wait.
        // The attempt owns the list from here on: released with it, even if a later option fails.
        let list = CurlHeaderList(fields: request.headerFields)
        attempt.headerList = list
        try pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list.first), "HTTPHEADER")

        if !configuration.proxy.isNone { try configureProxy(easy, configuration.proxy.server(for: request)) }
        if !configuration.connectionOverrides.addresses.isEmpty {
            try configureAddress(&attempt, configuration.connectionOverrides.address(for: request), request)
        }
    }

    /// Connects to the address that replaces the host (`CONNECT_TO`, which keeps the `Host`
    /// header and the TLS name), or to the host itself when `address` is `nil`. The list is the
    /// attempt's from here on.
    private static func configureAddress(
        _ attempt: inout CurlAttempt, _ address: String?, _ request: HTTPRequest
    ) throws(CurlCallFailure) {
        let easy = attempt.easy
        guard let address else {
            return try CurlCall.check(ccurl_easy_setopt_pointer(easy, CURLOPT_CONNECT_TO, nil), "setopt(CONNECT_TO)")
        }
        // HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT, an empty port keeping the URL's.
        let host = Origin.hostAndPort(of: request.authority ?? "").host
        guard let list = "\(host)::\(address):".withCString({ curl_slist_append(nil, $0) }) else {
            throw CurlCallFailure(call: "curl_slist_append(CONNECT_TO)", code: Int(CURLE_OUT_OF_MEMORY.rawValue), text: "out of memory")
        }
        attempt.connectTo = list
        try CurlCall.check(ccurl_easy_setopt_pointer(easy, CURLOPT_CONNECT_TO, UnsafeMutableRawPointer(list)), "setopt(CONNECT_TO)")
    }

    /// Sends the transfer through `proxy`, or directly (`nil`), setting or clearing every proxy
    /// option.
    private static func configureProxy(_ easy: UnsafeMutableRawPointer, _ proxy: ProxyServer?) throws(CurlCallFailure) {
        try string(easy, CURLOPT_PROXY, proxy?.url ?? "", "PROXY")
        // Courier decided already: libcurl must not read `no_proxy` from the environment and go
        // direct after all. An https server goes through a tunnel (libcurl's own choice for an
        // http:// proxy); an http one is forwarded, as HTTP proxies expect.
        try string(easy, CURLOPT_NOPROXY, "", "NOPROXY")
        try string(easy, CURLOPT_PROXYUSERNAME, proxy?.username, "PROXYUSERNAME")
        try string(easy, CURLOPT_PROXYPASSWORD, proxy?.username == nil ? nil : proxy?.password ?? "", "PROXYPASSWORD")
        try CurlCall.check(
            ccurl_easy_setopt_long(easy, CURLOPT_PROXYAUTH, 1 /* CURLAUTH_BASIC, a macro Swift cannot import */),
            "curl_easy_setopt(PROXYAUTH)")
    }

    /// The schemes libcurl may use, NUL-terminated like every `StaticString`.
    private static let allowedProtocols: StaticString = "http,https"

    /// Writes `scheme://authority/path` and a NUL into `buffer`, replacing what it held.
    static func writeURL(of request: HTTPRequest, into buffer: inout [CChar]) {
        buffer.removeAll(keepingCapacity: true)
        func append(_ text: String) {
            var text = text
            text.withUTF8 { bytes in bytes.withMemoryRebound(to: CChar.self) { buffer.append(contentsOf: $0) } }
        }
        append(request.scheme ?? "http")
        append("://")
        append(request.authority ?? "")
        append(request.path ?? "/")
        buffer.append(0)
    }

    private static func configureTLS(_ easy: UnsafeMutableRawPointer, _ tls: CurlTransport.TLSOptions) throws(CurlCallFailure) {
        try long(easy, CURLOPT_SSL_VERIFYPEER, tls.isVerificationDisabled ? 0 : 1, "SSL_VERIFYPEER")
        try long(easy, CURLOPT_SSL_VERIFYHOST, tls.isVerificationDisabled ? 0 : 2, "SSL_VERIFYHOST")
        // TLS 1.2 at least, whatever the library's own default.
        try long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "SSLVERSION")
        if let file = tls.caFile { try string(easy, CURLOPT_CAINFO, file, "CAINFO") }
        if let pem = tls.caPEM {
            let bytes = Array(pem.utf8)
            let code = bytes.withUnsafeBytes { raw in
                raw.baseAddress.map { ccurl_easy_setopt_blob(easy, CURLOPT_CAINFO_BLOB, $0, raw.count) } ?? CURLE_OK
            }
            try CurlCall.check(code, "setopt(CAINFO_BLOB)")
        }
        if let certificate = tls.clientCertificateFile { try string(easy, CURLOPT_SSLCERT, certificate, "SSLCERT") }
        if let key = tls.clientKeyFile { try string(easy, CURLOPT_SSLKEY, key, "SSLKEY") }
        if let password = tls.clientKeyPassword { try string(easy, CURLOPT_KEYPASSWD, password, "KEYPASSWD") }
        if let pin = tls.pinnedPublicKey { try string(easy, CURLOPT_PINNEDPUBLICKEY, pin, "PINNEDPUBLICKEY") }
    }

    /// A duration in whole milliseconds for libcurl, at least 1 (0 would mean "no limit").
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int.max / 2 }
        return max(1, Int(total.partialValue + attoseconds / 1_000_000_000_000_000))
    }

    /// Sets a number option.
    private static func long(
        _ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: Int, _ name: StaticString
    ) throws(CurlCallFailure) {
        try CurlCall.check(ccurl_easy_setopt_long(easy, option, value), "curl_easy_setopt(\(name))")
    }

    /// Sets a text option (libcurl copies it), or resets it to its default with `nil`.
    private static func string(
        _ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String?, _ name: StaticString
    ) throws(CurlCallFailure) {
        let code =
            value.map { $0.withCString { ccurl_easy_setopt_string(easy, option, $0) } } ?? ccurl_easy_setopt_string(easy, option, nil)
        try CurlCall.check(code, "curl_easy_setopt(\(name))")
    }

    /// Sets a pointer option.
    private static func pointer(
        _ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: UnsafeMutableRawPointer?, _ name: StaticString
    ) throws(CurlCallFailure) {
        try CurlCall.check(ccurl_easy_setopt_pointer(easy, option, value), "curl_easy_setopt(\(name))")
    }
}
