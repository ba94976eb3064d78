/// What the benchmark can run: which client, which request, which HTTP version.

/// A client the benchmark measures.
public enum BenchTransport: String, CaseIterable, Codable, Sendable, Comparable {
    /// Courier over libcurl multi (`CurlTransport`).
    case curl
    /// The same, with the calling tasks on the transport's own thread (`CurlTransport.executor`):
    /// no thread hop per call.
    case curlEngine = "curl-engine"
    /// Courier over URLSession from FoundationNetworking.
    case urlsession
    /// Courier over AsyncHTTPClient.
    case ahc
    /// Courier over the mock transport: no I/O, so it measures the SDK's own overhead.
    case mock
    /// The C program on libcurl multi, without Courier: the floor the curl transport is held to.
    case reference

    /// The order rows are shown in.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// The request one run repeats.
public enum Scenario: String, CaseIterable, Codable, Sendable, Comparable {
    /// GET of a 100-byte body.
    case small
    /// GET of a 16 KiB body.
    case medium
    /// GET of a 1 MiB body.
    case large
    /// POST of a 1 KiB JSON body (the server echoes it).
    case post
    /// GET of a response the client's memory cache holds: after the first request, every call is
    /// a cache hit, so its cost stands beside a network call's.
    case cached
    /// GET of a 16 KiB response the client's disk cache holds (in a temporary directory): every
    /// call after the first reads it from disk.
    case cachedDisk = "cached-disk"
    /// GET of the `--url` endpoint as it is (only with `--url`).
    case get
    /// The `--url` request as `-X`, `--data` or `--data-file` shape it (only with `--url`).
    case custom

    /// The scenarios the embedded server serves, in order.
    public static let embedded: [Scenario] = [.small, .medium, .large, .post, .cached, .cachedDisk]

    /// The embedded server's path for this scenario.
    public var path: String {
        switch self {
        case .small: "/bytes/100"
        case .medium: "/bytes/16384"
        case .large: "/bytes/1048576"
        case .post: "/echo"
        case .cached: "/cacheable/bench?cc=max-age%3D31536000"
        case .cachedDisk: "/cacheable/bench-disk?cc=max-age%3D31536000&bytes=16384"
        case .get, .custom: ""
        }
    }

    /// The response body size the embedded server sends (the echo's size varies, so `nil`).
    public var responseBytes: Int? {
        switch self {
        case .small: 100
        case .medium: 16384
        case .large: 1 << 20
        case .post, .get, .custom, .cached: nil
        case .cachedDisk: 16384
        }
    }

    /// The request this scenario sends, from the run's request (its headers and deadline, and for
    /// ``custom`` its method and body too).
    public func request(from base: BenchRequest) -> BenchRequest {
        switch self {
        case .small, .medium, .large, .get, .cached, .cachedDisk: base.with(method: "GET", body: nil, contentType: nil)
        case .post: base.with(method: "POST", body: Self.postBody, contentType: "application/json")
        case .custom: base
        }
    }

    /// The 1 KiB JSON document the `post` scenario sends.
    public static let postBody: [UInt8] = {
        let prefix = Array(#"{"kind":"courier-bench","padding":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        return prefix + [UInt8](repeating: UInt8(ascii: "x"), count: 1024 - prefix.count - suffix.count) + suffix
    }()

    /// The response cache Courier's clients use (the C reference and the limit tools have none,
    /// so they show the network call beside it).
    public var cache: WorkerJob.Cache? {
        switch self {
        case .cached: .memory
        case .cachedDisk: .disk
        default: nil
        }
    }

    /// The order rows are shown in.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// The HTTP version a run uses.
public enum HTTPChoice: String, CaseIterable, Codable, Sendable, Comparable {
    /// HTTP/1.1 over cleartext TCP.
    case http1 = "1.1"
    /// HTTP/2 over TLS, negotiated through ALPN (the embedded server uses a private test CA).
    case http2 = "2"
    /// Cleartext HTTP/2 with prior knowledge.
    case h2c

    /// The order rows are shown in.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// One cell of the matrix: a scenario at a concurrency over an HTTP version.
public struct BenchConfiguration: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
    /// The request.
    public var scenario: Scenario
    /// Requests in flight at once.
    public var concurrency: Int
    /// The HTTP version.
    public var http: HTTPChoice

    /// Creates a configuration.
    public init(scenario: Scenario, concurrency: Int, http: HTTPChoice) {
        self.scenario = scenario
        self.concurrency = concurrency
        self.http = http
    }

    /// `small GET · HTTP/1.1 · c64`.
    public var description: String { "\(scenario.rawValue) · HTTP/\(http.rawValue) · c\(concurrency)" }

    /// Scenario, then HTTP version, then concurrency.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.scenario, lhs.http, lhs.concurrency) < (rhs.scenario, rhs.http, rhs.concurrency)
    }
}
