import Courier
import CourierConformance
import CourierCurl
import CourierURLSession
import Foundation
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

extension ConformanceTransport {
    static let urlSession = ConformanceTransport(
        name: "urlsession", nativeErrorDomain: NSURLErrorDomain,
        phaseTimings: .unavailable(reason: "URLSession on Linux does not report task metrics")
    ) { _ in URLSessionTransport() }

    static let curl = ConformanceTransport(name: "curl", nativeErrorDomain: "CURLcode", phaseTimings: .reported) { _ in
        try CurlTransport()
    }

    #if AsyncHTTPClient
        static let asyncHTTPClient = ConformanceTransport(
            name: "ahc", nativeErrorDomain: "IOError",
            phaseTimings: .unavailable(reason: "AsyncHTTPClient does not report phase timings")
        ) { configuration in
            var settings = AsyncHTTPClientTransport.Configuration()
            settings.connectTimeout = configuration.connectTimeout
            return try AsyncHTTPClientTransport(configuration: settings)
        }
    #endif

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
    @Test("GET sends the encoded query and headers, and decodes the JSON echo", arguments: ConformanceTransport.all)
    func getWithQueryAndHeaders(transport: ConformanceTransport) async throws {
        try await ConformanceCases.getWithQueryAndHeaders(transport)
    }

    @Test("POST JSON, form and raw bodies arrive intact", arguments: ConformanceTransport.all, ["json", "form", "text"])
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

    @Test("non-2xx statuses fail with httpStatus and keep the body", arguments: ConformanceTransport.all, [400, 404, 422, 500, 503])
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

    @Test("the call's deadline applies: a slow server times out while awaiting the response", arguments: ConformanceTransport.all)
    func timeout(transport: ConformanceTransport) async throws {
        try await ConformanceCases.timeout(transport)
    }

    @Test("a slow body cannot stretch the deadline", arguments: ConformanceTransport.all)
    func timeoutWhileReceiving(transport: ConformanceTransport) async throws {
        try await ConformanceCases.timeoutWhileReceiving(transport)
    }

    @Test("connection refused is a connect failure", arguments: ConformanceTransport.all)
    func connectionRefused(transport: ConformanceTransport) async throws {
        try await ConformanceCases.connectionRefused(transport)
    }

    @Test("DNS failure for a .invalid host", arguments: ConformanceTransport.all)
    func dnsFailure(transport: ConformanceTransport) async throws {
        try await ConformanceCases.dnsFailure(transport)
    }

    @Test(
        "a response over the size limit fails with responseTooLarge", arguments: ConformanceTransport.all,
        [("bytes/100000", []), ("stream/50", [QueryItem("size", "1000")])])
    func tooLarge(transport: ConformanceTransport, route: (path: String, query: [QueryItem])) async throws {
        try await ConformanceCases.tooLarge(transport, route: route)
    }

    @Test("a 1 MiB body arrives whole", arguments: ConformanceTransport.all)
    func largeDownload(transport: ConformanceTransport) async throws {
        try await ConformanceCases.largeDownload(transport)
    }

    @Test("redirects are followed up to the limit", arguments: ConformanceTransport.all)
    func redirects(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirects(transport)
    }

    @Test("credentials never follow a redirect to another origin, but do to the same origin", arguments: ConformanceTransport.all)
    func redirectCredentials(transport: ConformanceTransport) async throws {
        try await ConformanceCases.redirectCredentials(transport)
    }
}
