import Courier
import CourierConformance
import CourierCurl
import CourierStreaming
import CourierTestServer
import CourierURLSession
import Foundation
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

extension ConformanceTransport {
    static let urlSession: ConformanceTransport = {
        var transport = ConformanceTransport(
            name: "urlsession", nativeErrorDomain: NSURLErrorDomain,
            phaseTimings: .unavailable(reason: "URLSession on Linux does not report task metrics"),
            make: TransportRegistry.Entry.urlSession().make)
        // HTTPURLResponse keeps one value per header name.
        transport.repeatedResponseHeaders = .joined
        // FoundationNetworking hands over a 1xx as the final response; the adapter refuses it.
        transport.interimResponses = .refused
        // FoundationNetworking on Linux has no way to add a trusted root.
        transport.privateCA = .refused
        // ...nor a proxy setting: its libcurl follows the environment's proxy variables.
        transport.proxying = .environmentOnly
        // ...and connects only to the URL's host.
        transport.connectionOverriding = .refused
        // No connect timeout of its own: its idle timeout (the stall limit) bounds connecting.
        transport.connectTimeout = .boundedByStallLimit
        // FoundationNetworking traps on these (URLSessionCrashTests runs each in a child process).
        transport.crashesInToolchain = [.headWithoutBlankLine, .redirectToMappedIPv6, .trailers]
        // ...and takes seconds over 10,000 header lines on its one process-wide queue
        // (URLSessionCrashTests runs it in a child process too).
        transport.holdsToolchainQueue = [.tooManyHeaders]
        // FoundationNetworking asks for and decodes gzip and deflate whatever the call says.
        transport.alwaysDecodes = true
        // ...and ends a truncated gzip stream quietly, so the call gets the part that arrived.
        transport.detectsTruncatedCoding = false
        // ...and counts no bytes before decoding: a body with no length is held to the cap alone.
        transport.checksRatioWithoutLength = false
        // FoundationNetworking delivers the body as fast as the network; a slow consumer buffers.
        transport.downloadBackpressure = .none
        // ...and, with libcurl 7, sends a request a dead reused connection swallowed again,
        // whatever its method (FoundationNetworking loads the process's libcurl).
        transport.deadReusedConnection =
            CurlTransport.libcurlVersion.hasPrefix("7.") ? .everyRequestResent : .unsafeRequestsFailUnclassified
        return transport
    }()

    static let curl: ConformanceTransport = {
        var transport = ConformanceTransport(
            name: "curl", nativeErrorDomain: "CURLcode", phaseTimings: .reported, make: TransportRegistry.Entry.curl().make)
        // libcurl before 8.0 breaks reused h2c connections (curl issue 10634): refused there.
        transport.cleartextHTTP2 = CurlTransport.supportsCleartextHTTP2 ? .supported : .unsupported
        // libcurl queues the RST_STREAM of a removed handle until the connection is used again.
        transport.http2StreamReset = .withNextFrame
        // libcurl resends a refused stream (nghttp2 refuses those above a GOAWAY's last id too)
        // itself; Courier lets it only for a request that may be repeated.
        transport.refusedStream = .resentByLibraryWhenRepeatable
        transport.goAwayStream = .resentByLibraryWhenRepeatable
        // libcurl before 8.14 reads a TLS close without close_notify as a clean end, so the transport fails
        // every close-delimited HTTPS body there.
        transport.provesCleanTLSClose = CurlTransport.detectsUncleanTLSClose
        transport.resendsHTTP2CutBeforeHead = CurlTransport.libcurlVersion.hasPrefix("7.")
        return transport
    }()

    #if AsyncHTTPClient
        static let asyncHTTPClient: ConformanceTransport = {
            var transport = ConformanceTransport(
                name: "ahc", nativeErrorDomain: "IOError",
                phaseTimings: .unavailable(reason: "AsyncHTTPClient does not report phase timings"),
                make: TransportRegistry.Entry.asyncHTTPClient().make)
            // AsyncHTTPClient tunnels every call through a proxy, plain http too.
            transport.proxying = .tunnelsEverything
            // It cannot verify the name over a Unix socket or at an overridden address.
            transport.connectionOverriding = .plainHTTPOnly
            // AsyncHTTPClient skips 1xx responses inside its channel handler, unseen.
            transport.interimResponses = .skippedUnseen
            // NIOHTTP2 reports a stream dropped by a GOAWAY as CANCEL, like a server's own reset.
            transport.goAwayStream = .failed
            // One connection per host: a call waits for a stream (AsyncHTTPClient issue #342).
            transport.fullHTTP2Connection = .waits
            // An idle connection the server closed is noticed when a request is written on it.
            transport.staleConnectionCheck = .onWrite
            // A file body runs ahead of the connection by what the event loop has not written yet
            // (12-48 MiB of a 64 MiB upload alone on the 2-core VM, 50-53 MiB under a full run).
            transport.uploadBackpressure = .pausedLate
            return transport
        }()
    #endif

    /// The transports again, against a server speaking HTTP/2 over TLS or cleartext HTTP/2. Left
    /// out, each with its reason checked by a case of its own: URLSession over TLS (it cannot
    /// trust the test CA: `http2OverTLS`), and every transport that declares h2c unsupported
    /// (`cleartextHTTP2`; on libcurl 8.0+ curl runs here over h2c too).
    static var overHTTP2: [ConformanceTransport] {
        all.filter { $0.privateCA == .trusted }.map { $0.over(.tls) } + all.filter { $0.cleartextHTTP2 == .supported }.map { $0.over(.h2c) }
    }

    /// Every transport over every protocol it supports, for the cases that do not depend on one.
    static var everyProtocol: [ConformanceTransport] { all + overHTTP2 }

    /// Every transport over HTTP/1.1, and over HTTP/2 with TLS where it trusts the test CA: for the
    /// cases about where a call connects (a proxy, a Unix socket, an address override).
    static var overHTTP1AndTLS: [ConformanceTransport] { all + all.filter { $0.privateCA == .trusted }.map { $0.over(.tls) } }

    /// Every transport this build links: AsyncHTTPClient only with the `AsyncHTTPClient` trait
    /// (the README's test command turns it on).
    static var all: [ConformanceTransport] {
        #if AsyncHTTPClient
            [.urlSession, .curl, .asyncHTTPClient]
        #else
            [.urlSession, .curl]
        #endif
    }
}

@Suite("Conformance: every transport against the loopback server", .timeLimit(.minutes(3)))
struct ConformanceTests {
    @Test(
        "path segments, query names and values round-trip through the echo", arguments: ConformanceTransport.everyProtocol,
        ConformanceCases.encodingSamples)
    func encodingRoundTrip(transport: ConformanceTransport, text: String) async throws {
        try await ConformanceCases.encodingRoundTrip(transport, text: text)
    }

    @Test("HTTP/2 over TLS: the CA from the configuration, one connection for many calls", arguments: ConformanceTransport.all)
    func http2OverTLS(transport: ConformanceTransport) async throws {
        try await ConformanceCases.http2OverTLS(transport)
    }

    @Test(
        "a misbehaving server gives the same error kind and phase on every transport; 1xx responses are skipped",
        arguments: ConformanceTransport.all.flatMap { transport in transport.survivableFaults.map { (transport, $0) } })
    func fault(transport: ConformanceTransport, fault: FaultServer.Fault) async throws {
        try await ConformanceCases.fault(transport, fault: fault)
    }

    @Test(
        "a body cut in the same write as its head: the reader gets the head and the bytes that came, then connection_closed",
        arguments: ConformanceTransport.all)
    func cutWithItsHead(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cutWithItsHead(transport)
    }

    /// Seeds per transport: 400 in the test command; `scripts/mutate.sh` runs 10,000.
    static let mutationCount = UInt64(ProcessInfo.processInfo.environment["COURIER_MUTATIONS"].flatMap(Int.init) ?? 400)

    @Test(
        "mutated responses: every call ends once, with a response or a typed error, and none times out",
        // URLSession is left out: FoundationNetworking traps on some broken answers (see
        // `crashesInToolchain` and URLSessionCrashTests), which mutations produce.
        arguments: ConformanceTransport.all.filter { $0.crashesInToolchain.isEmpty })
    func mutatedResponses(transport: ConformanceTransport) async throws {
        let count = Self.mutationCount
        let tally = try await ConformanceCases.mutatedResponses(transport, seeds: 0..<count)
        #expect(tally.completed == Int(count))
        #expect(tally.foreign.isEmpty, "\(tally.foreign.prefix(5))")
        #expect(tally.timedOut.isEmpty, "seeds that timed out: \(tally.timedOut.prefix(20))")
        #expect(tally.responses.values.reduce(0, +) + tally.failures.values.reduce(0, +) == Int(count))
        // Some broken responses still parse (a flipped body byte), most do not: both happen.
        #expect(!tally.responses.isEmpty && !tally.failures.isEmpty)
        // A broken answer is never the request's fault, and never left unclassified.
        #expect(tally.failures["invalid_request"] == nil, "\(tally.examples["invalid_request"] ?? [])")
        #expect(tally.failures["transport_failure"] == nil, "\(tally.examples["transport_failure"] ?? [])")
        if ProcessInfo.processInfo.environment["COURIER_MUTATIONS"] != nil {
            print(
                "mutations \(transport.name): \(count) calls, responses \(tally.responses.sorted { $0.key < $1.key }), failures \(tally.failures.sorted { $0.key < $1.key })"
            )
            for (kind, examples) in tally.examples.sorted(by: { $0.key < $1.key }) {
                print("  \(kind): \(examples.joined(separator: " | "))")
            }
        }
    }

    @Test(
        "mutated responses found misclassified by the 10,000-seed runs are malformed responses, not request errors or unknown failures",
        arguments: ConformanceTransport.all.filter { $0.crashesInToolchain.isEmpty })
    func mutatedResponseRegressions(transport: ConformanceTransport) async throws {
        // 9192: curl said invalid_request (CURLcode 43 from the chunked decoder). 856, 3688, 4840:
        // ahc said transport_failure (NIOHTTPDecoderError.unsolicitedResponse). 8: curl on libcurl
        // 8 said connection_closed for a chunk size that is not hex (CURLcode 56).
        for seed: UInt64 in [856, 3688, 4840, 9192] {
            let tally = try await ConformanceCases.mutatedResponses(transport, seeds: seed..<(seed + 1), concurrency: 1)
            #expect(tally.completed == 1)
            #expect(tally.foreign.isEmpty && tally.timedOut.isEmpty)
            #expect(
                tally.failures["invalid_request"] == nil && tally.failures["transport_failure"] == nil, "seed \(seed): \(tally.examples)")
        }
        let badChunk = try await ConformanceCases.mutatedResponses(transport, seeds: 8..<9, concurrency: 1)
        #expect(badChunk.failures == ["invalid_response": 1], "\(badChunk.examples)")
    }

    @Test(
        "compressed bodies: gzip and deflate decoded on every transport; bomb, truncated, corrupt, unknown and chained fail",
        // One case at a time: the bombs decode megabytes each, and run side by side they starve the
        // timing-based cases of this suite on a 2-core machine.
        .serialized, arguments: ConformanceTransport.all.flatMap { transport in FaultServer.Encoded.allCases.map { (transport, $0) } })
    func decompression(transport: ConformanceTransport, encoded: FaultServer.Encoded) async throws {
        try await ConformanceCases.decompression(transport, encoded: encoded)
    }

    @Test("a decompression bomb under a raised body cap fails on the ratio limit", .serialized, arguments: ConformanceTransport.all)
    func decompressionRatio(transport: ConformanceTransport) async throws {
        try await ConformanceCases.decompressionRatio(transport)
    }

    @Test(
        "a chunked gzip body with no length, read after its transfer ended, decodes whole under the ratio",
        .serialized, arguments: ConformanceTransport.all)
    func decompressionUnannounced(transport: ConformanceTransport) async throws {
        try await ConformanceCases.decompressionUnannounced(transport)
    }

    @Test("a call that sets its own Accept-Encoding gets the raw bytes", arguments: ConformanceTransport.all)
    func decompressionOptOut(transport: ConformanceTransport) async throws {
        try await ConformanceCases.decompressionOptOut(transport)
    }

    @Test("GET sends the encoded query and headers, and decodes the JSON echo", arguments: ConformanceTransport.everyProtocol)
    func getWithQueryAndHeaders(transport: ConformanceTransport) async throws {
        try await ConformanceCases.getWithQueryAndHeaders(transport)
    }

    @Test("POST JSON, form and raw bodies arrive intact", arguments: ConformanceTransport.everyProtocol, ["json", "form", "text"])
    func postBodies(transport: ConformanceTransport, bodyKind: String) async throws {
        try await ConformanceCases.postBodies(transport, bodyKind: bodyKind)
    }

    @Test("multipart bodies stream file parts from disk", arguments: ConformanceTransport.all)
    func multipart(transport: ConformanceTransport) async throws {
        try await ConformanceCases.multipart(transport)
    }

    @Test("a missing multipart file fails as an invalid request before any I/O", arguments: ConformanceTransport.all)
    func multipartMissingFile(transport: ConformanceTransport) async throws {
        try await ConformanceCases.multipartMissingFile(transport)
    }

    @Test(
        "non-2xx statuses fail with httpStatus and keep the body", arguments: ConformanceTransport.everyProtocol, [400, 404, 422, 500, 503])
    func statusErrors(transport: ConformanceTransport, code: Int) async throws {
        try await ConformanceCases.statusErrors(transport, code: code)
    }

    @Test(
        "invalid headers are rejected before any I/O", arguments: ConformanceTransport.all,
        [("X-Bad", "a\r\nInjected: 1"), ("X-Nul", "a\u{0}b"), ("Bad Name", "v"), ("X-Lf", "a\nb")])
    func invalidHeaders(transport: ConformanceTransport, header: (name: String, value: String)) async throws {
        try await ConformanceCases.invalidHeaders(transport, header: header)
    }

    @Test("cancelling mid-response reports cancelled promptly and closes the connection", arguments: ConformanceTransport.all)
    func cancelMidResponse(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cancelMidResponse(transport)
    }

    @Test("the call's deadline applies: a slow server times out while awaiting the response", arguments: ConformanceTransport.everyProtocol)
    func timeout(transport: ConformanceTransport) async throws {
        try await ConformanceCases.timeout(transport)
    }

    @Test("a slow body cannot stretch the deadline", arguments: ConformanceTransport.everyProtocol)
    func timeoutWhileReceiving(transport: ConformanceTransport) async throws {
        try await ConformanceCases.timeoutWhileReceiving(transport)
    }

    @Test("DNS failure for a .invalid host", arguments: ConformanceTransport.all)
    func dnsFailure(transport: ConformanceTransport) async throws {
        try await ConformanceCases.dnsFailure(transport)
    }

    @Test(
        "a response over the size limit fails with responseTooLarge", arguments: ConformanceTransport.everyProtocol,
        [("bytes/100000", []), ("stream/50", [QueryItem("size", "1000")])])
    func tooLarge(transport: ConformanceTransport, route: (path: String, query: [QueryItem])) async throws {
        try await ConformanceCases.tooLarge(transport, route: route)
    }

    @Test("a 1 MiB body arrives whole", arguments: ConformanceTransport.everyProtocol)
    func largeDownload(transport: ConformanceTransport) async throws {
        try await ConformanceCases.largeDownload(transport)
    }

    @Test("redirects are followed up to the limit", arguments: ConformanceTransport.all)
    func redirects(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirects(transport)
    }

    @Test(
        "a redirect to another origin (port, host, scheme, protocol-relative) carries only the safelisted headers",
        arguments: ConformanceTransport.all, ConformanceCases.redirectStatuses)
    func redirectCrossOrigin(transport: ConformanceTransport, status: Int) async throws {
        try await ConformanceCases.redirectCrossOrigin(transport, status: status)
    }

    @Test("https to http and foreign schemes are refused, and nothing is sent", arguments: ConformanceTransport.all)
    func redirectRefused(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirectRefused(transport)
    }

    @Test("a Location with an encoded CR, LF or NUL never becomes a request", arguments: ConformanceTransport.all)
    func redirectMalformedLocation(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirectMalformedLocation(transport)
    }

    @Test("each method is sent as given; HEAD has no body", arguments: ConformanceTransport.everyProtocol, ConformanceCases.methods)
    func method(transport: ConformanceTransport, method: HTTPRequest.Method) async throws {
        try await ConformanceCases.method(transport, method: method)
    }

    @Test(
        "2xx statuses succeed; 204 and 304 have no body", arguments: ConformanceTransport.everyProtocol,
        [200, 201, 202, 204, 206, 299, 304])
    func successAndBodylessStatuses(transport: ConformanceTransport, code: Int) async throws {
        try await ConformanceCases.successAndBodylessStatuses(transport, code: code)
    }

    @Test(
        "repeated response headers keep their order; lookup ignores case; large values arrive whole",
        arguments: ConformanceTransport.everyProtocol)
    func responseHeaders(transport: ConformanceTransport) async throws {
        try await ConformanceCases.responseHeaders(transport)
    }

    @Test("empty, one-byte and chunked bodies, both ways", arguments: ConformanceTransport.everyProtocol)
    func smallAndChunkedBodies(transport: ConformanceTransport) async throws {
        try await ConformanceCases.smallAndChunkedBodies(transport)
    }

    @Test("200 concurrent calls complete once each with their own results", arguments: ConformanceTransport.everyProtocol)
    func concurrentCalls(transport: ConformanceTransport) async throws {
        try await ConformanceCases.concurrentCalls(transport)
    }

    @Test("cancelled before start never reaches the server; cancel after completion changes nothing", arguments: ConformanceTransport.all)
    func cancelBeforeAndAfter(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cancelBeforeAndAfter(transport)
    }

    @Test(
        "303 makes a GET, 301 and 302 only turn POST into GET; every other method keeps its method and body",
        arguments: ConformanceTransport.all, ConformanceCases.redirectStatuses)
    func redirectKeepsMeaning(transport: ConformanceTransport, status: Int) async throws {
        try await ConformanceCases.redirectKeepsMeaning(transport, status: status)
    }

    @Test(
        "a Location whose host decodes to more than a host (%2F, %5C, %40, %23, %3F, %3A, %25, non-ASCII) is refused; user info is dropped",
        arguments: ConformanceTransport.everyProtocol)
    func redirectHostileHost(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirectHostileHost(transport)
    }

    @Test(
        "a call goes through the configured proxy: tunnelled for https, forwarded or tunnelled for http",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func proxyCarriesCalls(transport: ConformanceTransport) async throws {
        try await ConformanceCases.proxyCarriesCalls(transport)
    }

    @Test(
        "a proxy's 407 fails as proxy_failure without or with wrong credentials; with them the server never sees them",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func proxyCredentials(transport: ConformanceTransport) async throws {
        try await ConformanceCases.proxyCredentials(transport)
    }

    @Test(
        "no-proxy servers are reached directly; a proxy that is down fails the call, never a direct call",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func proxyExclusionsAndAbsence(transport: ConformanceTransport) async throws {
        try await ConformanceCases.proxyExclusionsAndAbsence(transport)
    }

    @Test(
        "a certificate not trusted is tls_failure in phase tls, through the proxy's tunnel as without it",
        arguments: ConformanceTransport.all)
    func proxyTLSFailure(transport: ConformanceTransport) async throws {
        try await ConformanceCases.proxyTLSFailure(transport)
    }

    @Test(
        "a base URL that names a Unix socket sends every call through it, with the URL's host in Host",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func unixSocket(transport: ConformanceTransport) async throws {
        try await ConformanceCases.unixSocket(transport)
    }

    @Test(
        "an address override connects elsewhere and keeps the Host header and the TLS name", arguments: ConformanceTransport.overHTTP1AndTLS
    )
    func addressOverride(transport: ConformanceTransport) async throws {
        try await ConformanceCases.addressOverride(transport)
    }

    @Test(
        "server-sent events arrive in order across reconnections with Last-Event-ID; 204 ends them",
        arguments: ConformanceTransport.everyProtocol)
    func serverSentEvents(transport: ConformanceTransport) async throws {
        try await ConformanceCases.serverSentEvents(transport)
    }

    @Test(
        "an answer that is not an event stream fails at once; a server that is gone fails after the reconnections allowed",
        arguments: ConformanceTransport.all)
    func serverSentEventFailures(transport: ConformanceTransport) async throws {
        try await ConformanceCases.serverSentEventFailures(transport)
    }

    @Test(
        "JSON Lines decode a record per line; a bad line fails as decoding after the records before it",
        arguments: ConformanceTransport.everyProtocol)
    func jsonLines(transport: ConformanceTransport) async throws {
        try await ConformanceCases.jsonLines(transport)
    }

    @Test("an IPv6 literal host works, with Host naming it", arguments: ConformanceTransport.all)
    func ipv6Literal(transport: ConformanceTransport) async throws {
        try await ConformanceCases.ipv6Literal(transport)
    }

    @Test(
        "the cookie jar: cookies return to their origin, a redirect hop's stay with it, Secure only over https, no jar shared",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func cookieJar(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cookieJar(transport)
    }

    @Test(
        "one Set-Cookie field is one cookie: a comma in a value neither drops its attributes nor sets another cookie",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func cookieFieldsStayWhole(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cookieFieldsStayWhole(transport)
    }

    @Test(
        "progress: bytes sent and received with their lengths, a last report whatever the outcome, one reporter per call",
        arguments: ConformanceTransport.everyProtocol)
    func progress(transport: ConformanceTransport) async throws {
        try await ConformanceCases.progress(transport)
    }

    @Test(
        "downloads: whole, resumed with Range and If-Range, started over when the server cannot resume",
        arguments: ConformanceTransport.everyProtocol)
    func downloads(transport: ConformanceTransport) async throws {
        try await ConformanceCases.downloads(transport)
    }

    @Test(
        "a download that fails (checksum, a cut without resumption) leaves the destination as it was and no temporary file",
        arguments: ConformanceTransport.all)
    func downloadFailures(transport: ConformanceTransport) async throws {
        try await ConformanceCases.downloadFailures(transport)
    }

    @Test(
        "a download's part file: kept 0600 for the next run of the same URL, never continued by another, never a link followed; modes kept",
        arguments: ConformanceTransport.overHTTP1AndTLS)
    func downloadFiles(transport: ConformanceTransport) async throws {
        try await ConformanceCases.downloadFiles(transport)
    }

    @Test("a framing header from a caller or a middleware is refused, and nothing is sent", arguments: ConformanceTransport.all)
    func framingHeadersRefused(transport: ConformanceTransport) async throws {
        try await ConformanceCases.framingHeadersRefused(transport)
    }

    @Test("the cache never serves one caller's answer to other credentials", arguments: ConformanceTransport.all)
    func cacheKeepsCallersApart(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cacheKeepsCallersApart(transport)
    }

    @Test("auth middleware sends and refreshes its credential only on the call's own origin", arguments: ConformanceTransport.all)
    func authStaysWithOrigin(transport: ConformanceTransport) async throws {
        try await ConformanceCases.authStaysWithOrigin(transport)
    }

    @Test("a 401 with any authentication challenge reaches the caller at once", arguments: ConformanceTransport.everyProtocol)
    func authenticationChallenge(transport: ConformanceTransport) async throws {
        try await ConformanceCases.authenticationChallenge(transport)
    }

    @Test("a server that offers only TLS 1.0 or 1.1 is refused", arguments: ConformanceTransport.all)
    func tlsBelow12Refused(transport: ConformanceTransport) async throws {
        try await ConformanceCases.tlsBelow12Refused(transport)
    }

    @Test(
        "over TLS a body is whole only when its end is proven: a close-delimited body cut without close_notify fails",
        // URLSession cannot be given the test CA; FoundationNetworking's libcurl 7 would read the cut
        // body as whole (declared in the README).
        arguments: ConformanceTransport.all.filter { $0.privateCA == .trusted })
    func tlsEndProven(transport: ConformanceTransport) async throws {
        try await ConformanceCases.tlsEndProven(transport)
    }

    @Test("a file body that grew or shrank after it was made fails; an unchanged one goes whole", arguments: ConformanceTransport.all)
    func fileBodyChanged(transport: ConformanceTransport) async throws {
        try await ConformanceCases.fileBodyChanged(transport)
    }

    @Test("a caller's dot segments are refused; a server's are resolved, encoded ones too", arguments: ConformanceTransport.all)
    func dotSegments(transport: ConformanceTransport) async throws {
        try await ConformanceCases.dotSegments(transport)
    }

    @Test("below network middleware the cache stores only public answers", arguments: ConformanceTransport.all)
    func cacheBelowNetworkMiddleware(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cacheBelowNetworkMiddleware(transport)
    }

    @Test("cleartext HTTP/2: multiplexed where supported, refused before any I/O where not", arguments: ConformanceTransport.all)
    func cleartextHTTP2(transport: ConformanceTransport) async throws {
        try await ConformanceCases.cleartextHTTP2(transport)
    }
}

/// The streaming cases (``ConformanceCases/streamedUpload(_:announced:)`` and the rest) over every
/// transport and protocol.
@Suite("Conformance: streaming")
struct StreamingConformanceTests {
    @Test("a streamed request body arrives whole", arguments: ConformanceTransport.everyProtocol, [true, false])
    func streamedUpload(transport: ConformanceTransport, announced: Bool) async throws {
        try await ConformanceCases.streamedUpload(transport, announced: announced)
    }

    @Test("a producer that breaks its announced length fails as invalid_request", arguments: ConformanceTransport.all, [10, -10])
    func streamedUploadBreaksLength(transport: ConformanceTransport, surplus: Int) async throws {
        try await ConformanceCases.streamedUploadBreaksLength(transport, surplus: surplus)
    }

    @Test("a streamed response arrives whole and is observed once, at its end", arguments: ConformanceTransport.everyProtocol)
    func streamedDownload(transport: ConformanceTransport) async throws {
        try await ConformanceCases.streamedDownload(transport)
    }

    @Test("cancelling the reader stops the transfer", arguments: ConformanceTransport.everyProtocol)
    func streamedCancel(transport: ConformanceTransport) async throws {
        try await ConformanceCases.streamedCancel(transport)
    }

    @Test("the deadline covers a streamed body", arguments: ConformanceTransport.all)
    func streamedDeadline(transport: ConformanceTransport) async throws {
        try await ConformanceCases.streamedDeadline(transport)
    }
}
