import Foundation
import HTTPTypes
import Logging

/// Posts each alert as JSON to a URL through a Courier client.
///
/// Calls made while delivering are not counted by ``FailureAlerts`` (no alert about the alert
/// webhook), even when the same client is used. A failed post is logged at `warning` on the
/// client's logger and dropped: alerts never retry forever.
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
    }

    private let client: NetworkClient
    private let url: String

    /// Creates the sink.
    /// - Parameters:
    ///   - client: The client that sends the posts.
    ///   - url: The webhook's URL.
    public init(client: NetworkClient, url: String) {
        self.client = client
        self.url = url
    }

    /// Posts the alert; logs and drops it when the post fails.
    public func deliver(_ alert: Alert) async {
        let payload = Payload(
            kind: alert.kind.rawValue, rule: alert.rule, group: alert.group, endpoint: alert.endpoint, team: alert.team,
            failures: alert.failures, calls: alert.calls, lastError: alert.lastError, sampleRequestID: alert.sampleRequestID)
        do {
            _ = try await client.send(Post(baseURL: url, body: .json(payload)))
        } catch {
            client.configuration.logger.warning(
                "courier.alert.webhook_failed",
                metadata: ["courier.error": .string((error as? NetworkError)?.shortDescription ?? "unknown")])
        }
    }
}
