import Courier
import CourierCache
import Foundation
import HTTPTypes

/// `courier-bench probe`: one request through each selected transport, to see that they all see an
/// endpoint the same way.
public struct Probe: Sendable {
    /// What one transport saw.
    public struct Outcome: Codable, Sendable, Equatable {
        /// The transport.
        public var transport: String
        /// The response status, if a response arrived.
        public var status: Int?
        /// The HTTP version the response came over, as the transport reports it.
        public var httpVersion: String?
        /// Response body bytes.
        public var bytes: Int?
        /// Phase end times in milliseconds from the start of the transfer, by phase name.
        public var phasesMs: [String: Double]?
        /// Why there are no phase timings.
        public var phasesUnavailable: String?
        /// The whole call, in milliseconds.
        public var totalMs: Double?
        /// The error's kind (`timed_out`, `tls_failure`, ...), if the call failed.
        public var errorKind: String?
        /// The error's message.
        public var errorMessage: String?
        /// What the response cache did (`hit`, `miss`, `revalidated`, `stale`), with `--cache`.
        public var cache: String?
        /// The age of the stored response served, in seconds.
        public var cacheAgeSeconds: Int64?
        /// The proxy the call was sent through (its URL, without credentials), or `direct`.
        public var proxy: String?

        enum CodingKeys: String, CodingKey {
            case transport, status, bytes
            case httpVersion = "http_version"
            case phasesMs = "phases_ms"
            case phasesUnavailable = "phases_unavailable"
            case totalMs = "total_ms"
            case errorKind = "error_kind"
            case errorMessage = "error_message"
            case cache, proxy
            case cacheAgeSeconds = "cache_age_s"
        }
    }

    /// The transports a probe may use: the real ones.
    public static let transports: [BenchTransport] = [.curl, .urlsession, .ahc]

    /// The URL to request.
    public var url: String
    /// The transports to try, one after another.
    public var transports: [BenchTransport]
    /// The method, headers, body and deadline.
    public var request: BenchRequest
    /// An extra CA bundle to trust.
    public var caFile: String?
    /// The HTTP version to ask for (HTTP/2 when `nil`).
    public var http: HTTPChoice?
    /// A directory for a disk response cache, shared by the transports and by later probes.
    public var cacheDirectory: String?
    /// The forward proxy; none by default, whatever the environment says.
    public var proxy = ProxyConfiguration.none

    /// Creates a probe; ``ProbeCommand`` validates the values first.
    public init(
        url: String, transports: [BenchTransport], request: BenchRequest, caFile: String?, http: HTTPChoice?,
        cacheDirectory: String? = nil
    ) {
        self.cacheDirectory = cacheDirectory
        self.url = url
        self.transports = transports
        self.request = request
        self.caFile = caFile
        self.http = http
    }

    /// Sends the request through each transport, one after another.
    public func run() async -> [Outcome] {
        var outcomes: [Outcome] = []
        for transport in transports {
            outcomes.append(await probe(transport))
        }
        return outcomes
    }

    private func probe(_ name: BenchTransport) async -> Outcome {
        var outcome = Outcome(transport: name.rawValue)
        let version: HTTPChoice = http ?? .http2
        if !TransportFactory.isLinked(name) {
            outcome.errorKind = NetworkError.Kind.unsupported.description
            outcome.errorMessage = "this build does not link \(name.rawValue)"
            return outcome
        }
        let client: NetworkClient
        do {
            let transport = try TransportFactory.make(
                name, http: version, caFile: caFile, connections: 1, mockResponseBytes: 0, proxy: proxy)
            client = try TransportFactory.makeClient(
                transport: transport, name: name, timeout: .seconds(request.timeoutSeconds),
                cache: try cacheDirectory.map { directory throws(ConfigurationError) in try ResponseCache.disk(directory: directory) },
                proxy: proxy)
        } catch {
            outcome.errorKind = "configuration"
            outcome.errorMessage = "\(error)"
            return outcome
        }
        if let target = URLComponents(string: url), let scheme = target.scheme, let written = target.host,
            case .success(let host) = RequestTarget.canonicalHost(written)
        {
            let authority = target.port.map { "\(host):\($0)" } ?? host
            outcome.proxy = proxy.server(for: HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/"))?.url ?? "direct"
        }
        var endpoint = BenchEndpoint(url: url, request: request, httpVersion: version.preference)
        endpoint.acceptsAnyStatus = true
        do {
            let response = try await client.response(for: endpoint)
            outcome.status = response.head.status.code
            outcome.bytes = response.value.count
            outcome.record(response.metrics)
        } catch let error as NetworkError {
            outcome.status = error.status
            outcome.errorKind = error.kind.description
            outcome.errorMessage = error.message
            outcome.record(error.metrics)
        } catch {
            outcome.errorKind = "unknown"
            outcome.errorMessage = "\(error)"
        }
        await client.shutdown()
        return outcome
    }

    /// The outcomes as text, one block per transport.
    public static func text(_ outcomes: [Outcome]) -> String {
        outcomes.map { outcome in
            var lines = ["\(outcome.transport):"]
            if let kind = outcome.errorKind {
                lines.append("  error   \(kind): \(outcome.errorMessage ?? "")")
            }
            if let status = outcome.status {
                lines.append("  status  \(status), HTTP/\(outcome.httpVersion ?? "?"), \(outcome.bytes.map { "\($0) bytes" } ?? "no body")")
            }
            if let phases = outcome.phasesMs {
                let order = ["dns", "connect", "tls", "request_sent", "first_byte", "total"]
                let text = order.compactMap { key in phases[key].map { "\(key) \(String(format: "%.2f", $0)) ms" } }
                lines.append("  phases  " + text.joined(separator: ", "))
            } else if let why = outcome.phasesUnavailable {
                lines.append("  phases  unavailable: \(why)")
            }
            if let total = outcome.totalMs { lines.append("  total   \(String(format: "%.2f", total)) ms") }
            if let proxy = outcome.proxy { lines.append("  proxy   \(proxy)") }
            if let cache = outcome.cache {
                lines.append("  cache   \(cache)\(outcome.cacheAgeSeconds.map { ", age \($0) s" } ?? "")")
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }
}

extension Probe.Outcome {
    init(transport: String) {
        self.transport = transport
    }

    mutating func record(_ metrics: RequestMetrics?) {
        guard let metrics else { return }
        httpVersion = metrics.httpVersion
        cache = metrics.cache?.rawValue
        cacheAgeSeconds = metrics.cacheAge?.components.seconds
        totalMs = metrics.total.map { $0.inSeconds * 1000 }
        switch metrics.phaseTimings {
        case .available(let timings):
            var phases: [String: Double] = [:]
            let named: [(String, Duration?)] = [
                ("dns", timings.dns), ("connect", timings.connect), ("tls", timings.tls), ("request_sent", timings.requestSent),
                ("first_byte", timings.firstByte), ("total", timings.total),
            ]
            for (name, value) in named { if let value { phases[name] = value.inSeconds * 1000 } }
            phasesMs = phases
        case .unavailable(let reason):
            phasesUnavailable = reason
        }
    }
}
