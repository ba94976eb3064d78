import Foundation
import HTTPTypes
import Logging

extension Call {
    /// Logs a success and tells the observers.
    func reportSuccess(status: Int, metrics: RequestMetrics, authority: String?) {
        if logLevel <= .debug {
            var metadata: Logger.Metadata = [
                "courier.status": .stringConvertible(status), "courier.attempts": .stringConvertible(metrics.attempts),
                "courier.duration_ms": .stringConvertible(metrics.total?.wholeMilliseconds ?? 0),
            ]
            if let name = context.endpointName { metadata["courier.endpoint"] = .string(name) }
            taggedLogger.debug("courier.call.succeeded", metadata: metadata)
        }
        notify(status: status, error: nil, metrics: metrics, authority: authority)
    }

    /// The failures logged at `debug` whatever ``ClientConfiguration/failureLogLevel`` says: the
    /// caller's or the service's own decision (cancelled, shut down), and a host's open circuit,
    /// whose opening was logged once at `warning` (one line per refused call would flood the log
    /// exactly when the host is down).
    static let quietKinds: Set<NetworkError.Kind> = [.cancelled, .shutDown, .circuitOpen]

    /// Logs a failure (one fixed message per outcome) and tells the observers.
    func reportFailure(_ failure: NetworkError, authority: String?) {
        let metrics = failure.metrics ?? RequestMetrics(transport: client.transport.name)
        let level = Self.quietKinds.contains(failure.kind) ? Logger.Level.debug : client.configuration.failureLogLevel
        if logLevel <= level {
            var metadata: Logger.Metadata = [
                "courier.error": .string(failure.shortDescription), "courier.phase": .string(failure.phase.description),
                "courier.status": .stringConvertible(failure.status ?? 0),
                "courier.request": .string(failure.request?.description ?? ""),
                "courier.attempts": .stringConvertible(metrics.attempts),
                "courier.duration_ms": .stringConvertible(metrics.total?.wholeMilliseconds ?? 0),
            ]
            if let name = context.endpointName { metadata["courier.endpoint"] = .string(name) }
            taggedLogger.log(
                level: level, failure.kind == .cancelled ? "courier.call.cancelled" : "courier.call.failed", metadata: metadata)
        }
        notify(status: failure.status, error: failure, metrics: metrics, authority: authority)
    }

    /// Tells the observers about the finished call, and sends its last progress report.
    private func notify(status: Int?, error: NetworkError?, metrics: RequestMetrics, authority: String?) {
        progress?.finish()
        let observers = client.observers
        guard !observers.isEmpty else { return }
        let labels = EndpointLabels.shared
        let record = CallRecord(
            requestID: requestID,
            endpoint: context.endpointName.map { labels.label(named: $0) } ?? labels.label(for: settings.apiType),
            team: context.team, method: methodName, host: authority ?? "", status: status, error: error, metrics: metrics)
        for observer in observers { observer.callFinished(record) }
    }

    /// The request's method as described, for the call's record.
    private var methodName: String { buildFailure?.request?.method ?? request.method.rawValue }

    /// The call's logger with its id in the metadata (made only when a line is logged).
    private var taggedLogger: Logger { RequestContext.logger(logger, taggedWith: requestID) }

    @inline(never)
    func traceStart(_ request: HTTPRequest) {
        taggedLogger.trace(
            "courier.call.started",
            metadata: [
                "courier.method": .string(request.method.rawValue),
                "courier.url": .string(Redaction.redactedURL(request.urlText)),
                "courier.headers": .string(Redaction.redactedHeaders(request.headerFields, extraSecretNames: context.secretHeaderNames)),
            ])
    }

    @inline(never)
    func traceBody(_ data: Data, status: HTTPResponse.Status) {
        taggedLogger.trace(
            "courier.response.body",
            metadata: ["courier.status": .stringConvertible(status.code), "courier.body": .string(Self.bodyExcerpt(data))])
    }

    /// The first 1 KiB of a body for trace logs, as text when it is UTF-8.
    static func bodyExcerpt(_ data: Data) -> String {
        let limit = 1024
        let prefix = data.prefix(limit)
        let text = String(decoding: prefix, as: UTF8.self)
        return data.count > limit ? text + "… (\(data.count) bytes)" : text
    }
}
