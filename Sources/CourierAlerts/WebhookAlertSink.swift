import Courier
import Foundation
import HTTPTypes
import Logging

/// Posts each alert as JSON to a URL over a Courier client's transport.
///
/// The webhook is another service: the posts go through a plain client of their own on the same
/// transport, so none of the client's default headers, header rules, middleware or credentials
/// reach the webhook host, and calls made while delivering are not counted by ``FailureAlerts``
/// (no alert about the alert webhook). Put a credential the webhook needs in its URL's query or
/// use your own ``AlertSink``. A failed post is logged at `warning` on the client's logger and
/// dropped: alerts never retry forever.
///
/// The body is `{"kind":"tripped","rule":…,"group":…,"endpoint":…,"team":…,"failures":…,
/// "calls":…,"lastError":…,"sampleRequestID":…}`.
public struct WebhookAlertSink: AlertSink {
    private struct Post: Endpoint {
        typealias Output = Data
        var baseURL: String?
        var path: String { "" }
        var method: HTTPRequest.Method { .post }
        var body: RequestBody?
        var timeout: Duration? { .seconds(10) }
    }

    private struct Payload: Encodable {
        var kind: String
        var rule: String
        var group: String
        var endpoint: String
        var team: String?
        var failures: Int
        var calls: Int
        var lastError: String?
        var sampleRequestID: String

        init(_ alert: Alert) {
            kind = alert.kind.rawValue
            rule = alert.rule
            group = alert.group
            endpoint = alert.endpoint
            team = alert.team
            failures = alert.failures
            calls = alert.calls
            lastError = alert.lastError
            sampleRequestID = alert.sampleRequestID
        }
    }

    /// The plain client the posts go through, or why it could not be made.
    private let poster: Result<NetworkClient, ConfigurationError>
    private let logger: Logger
    private let url: String

    /// Creates the sink.
    /// - Parameters:
    ///   - client: The client whose transport (with its proxy and connection overrides), logger and
    ///     clock the posts use; nothing else of it.
    ///   - url: The webhook's URL.
    public init(client: NetworkClient, url: String) {
        var plain = ClientConfiguration()
        plain.logger = client.configuration.logger
        plain.timeSource = client.configuration.timeSource
        plain.exportsMetrics = false
        // The sink logs a failed post itself (`courier.alert.webhook_failed`, without the URL, whose
        // path is the webhook's secret on most services): the post's own failure line stays at debug.
        plain.failureLogLevel = .debug
        // The transport's own routes: posts go the way the client's calls go.
        plain.proxy = client.configuration.proxy
        plain.connectionOverrides = client.configuration.connectionOverrides
        poster = Result { () throws(ConfigurationError) in
            // A transport bound to a Unix socket would post the alert to the local daemon.
            if client.configuration.connectionOverrides.unixSocket != nil {
                throw ConfigurationError(
                    key: ConfigurationKey.connectionsUnixSocket.name, value: nil,
                    allowed: "no value on the client a webhook sink posts through: give the sink a client of its own",
                    source: "code")
            }
            return try NetworkClient(configuration: plain, transport: client.transport)
        }
        logger = client.configuration.logger
        self.url = url
    }

    /// Posts the alert; logs and drops it when the post fails.
    public func deliver(_ alert: Alert) async {
        let payload = Payload(alert)
        do {
            _ = try await poster.get().send(Post(baseURL: url, body: .json(payload)))
        } catch {
            logger.warning(
                "courier.alert.webhook_failed",
                metadata: ["courier.error": .string((error as? NetworkError)?.shortDescription ?? "unknown")])
        }
    }
}
