import Courier
import CourierCache
import CourierCurl
import CourierMock
import CourierURLSession
import Foundation

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// Makes the Courier transport a benchmark or probe uses, and says in advance what one cannot do.
enum TransportFactory {
    /// Why `transport` cannot run over `http` here, or `nil` when it can.
    /// - Parameters:
    ///   - transport: The client.
    ///   - http: The HTTP version.
    ///   - privateCA: Whether the server's certificate is signed by a CA the system does not trust
    ///     (the embedded server's, or one given with `--cacert`).
    static func unsupportedReason(_ transport: BenchTransport, http: HTTPChoice, privateCA: Bool) -> String? {
        switch (transport, http) {
        case (.ahc, _) where !isLinked(.ahc):
            return "this build does not link AsyncHTTPClient (build with the trait AsyncHTTPClient: COURIER_DEVELOPMENT=1 turns it on)"
        case (.urlsession, .http2) where privateCA:
            return "URLSession on Linux cannot trust a private CA"
        case (.urlsession, .h2c), (.ahc, .h2c):
            return "\(transport.rawValue) has no cleartext HTTP/2 with prior knowledge"
        case (.curl, .h2c), (.curlEngine, .h2c), (.reference, .h2c):
            return CurlTransport.supportsCleartextHTTP2
                ? nil : "libcurl before 8.0 breaks reused cleartext HTTP/2 connections (curl issue 10634)"
        default:
            return nil
        }
    }

    /// Whether this build links the transport.
    static func isLinked(_ transport: BenchTransport) -> Bool {
        #if AsyncHTTPClient
            return true
        #else
            return transport != .ahc
        #endif
    }

    /// Makes the transport (not for ``BenchTransport/reference``, which is not a Courier transport).
    /// - Parameters:
    ///   - transport: Which one.
    ///   - http: The HTTP version it is configured for.
    ///   - caFile: An extra CA bundle to trust.
    ///   - connections: The connections per host it may open.
    ///   - mockResponseBytes: The body size the mock answers every request with.
    static func make(
        _ transport: BenchTransport, http: HTTPChoice, caFile: String?, connections: Int, mockResponseBytes: Int,
        proxy: ProxyConfiguration = .none
    ) throws -> any Transport {
        switch transport {
        case .curl, .curlEngine:
            var configuration = CurlTransport.Configuration()
            configuration.httpVersion = http.preference
            configuration.maxConnectionsPerHost = max(1, connections)
            configuration.maxConnections = max(configuration.maxConnections, connections)
            configuration.tls.caFile = caFile
            configuration.proxy = proxy
            return try CurlTransport(configuration: configuration)
        case .urlsession:
            var configuration = URLSessionTransport.Configuration()
            configuration.maxConnectionsPerHost = max(1, connections)
            return URLSessionTransport(configuration: configuration)
        case .ahc:
            #if AsyncHTTPClient
                var configuration = AsyncHTTPClientTransport.Configuration()
                configuration.httpVersion = http.preference
                configuration.maxConnectionsPerHost = max(1, connections)
                configuration.caFile = caFile
                configuration.proxy = proxy
                return try AsyncHTTPClientTransport(configuration: configuration)
            #else
                throw BenchError.unsupported("this build does not link AsyncHTTPClient")
            #endif
        case .mock:
            var configuration = MockTransport.Configuration()
            configuration.maxRecordedRequests = 0
            let mock = MockTransport(configuration: configuration)
            // Cacheable, for the `cached` scenarios (only their clients have a cache).
            mock.stub(
                nil, "/**",
                .status(
                    200, headers: ["Cache-Control": "max-age=31536000"],
                    body: Data(repeating: UInt8(ascii: "x"), count: max(0, mockResponseBytes))))
            return mock
        case .reference:
            throw BenchError.unsupported("the reference is a C program, not a Courier transport")
        }
    }

    /// A client on a new transport, with Courier's defaults as a service would have them.
    static func makeClient(
        transport: any Transport, name: BenchTransport, timeout: Duration, cache: ResponseCache? = nil, proxy: ProxyConfiguration = .none
    ) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: nil, transport: name == .curlEngine ? "curl" : name.rawValue)
        configuration.proxy = proxy
        configuration.requestTimeout = timeout
        configuration.cache = cache
        return try NetworkClient(configuration: configuration, transport: transport)
    }
}
