import Foundation
import HTTPTypes
import Logging

extension Call {
    /// What a call's network part ended with (not generic: see ``Call``).
    enum Exchange {
        /// A response head and its whole body, for `sent`; the network part began at `networkStart`.
        case received(HTTPResponse, Data, sent: HTTPRequest, networkStart: Moment)
        /// The call failed; `sent` is `nil` when it failed before its request was built.
        case failed(NetworkError, sent: HTTPRequest?)
    }

    /// The network part of a buffered call: the call opened (see ``open()``), its whole body read
    /// under the same deadline, then the call ended.
    func readWhole() async -> Exchange {
        if let buildFailure { return .failed(buildFailure, sent: nil) }
        let opened: OpenedCall
        do throws(NetworkError) {
            opened = try await open()
        } catch {
            return .failed(error, sent: request)
        }
        let scope = opened.scope
        do {
            let response = opened.response
            recorder.enter(.receiving)
            let data: Data
            if let buffered = try response.body.bufferedBytes(upTo: scope.maxResponseBytes) {
                data = buffered
            } else {
                data = try await response.body.collect(upTo: scope.maxResponseBytes)
            }
            scope.end()
            return .received(response.head, data, sent: request, networkStart: scope.networkStart)
        } catch {
            scope.end()
            return .failed(scope.failure(error), sent: request)
        }
    }

    /// The call's result from its exchange: the status check, decoding, the metrics, the log line
    /// and the observers. Only decoding and the result depend on `Output`.
    @inline(never)
    func finish<Output>(_ exchange: consuming Exchange, decoder: ResponseDecoder<Output>) throws(NetworkError) -> DecodedResponse<Output> {
        switch consume exchange {
        case .failed(let error, let sent):
            throw fail(error, sent: sent)
        case .received(let head, let data, let sent, let networkStart):
            let status = head.status
            // Checking the status reads nothing the recorder holds: the call enters decoding
            // right away when the status is accepted (one lock instead of two).
            let acceptable = settings.statusValidation.isAcceptable(status.code)
            // The network part ends where decoding starts: one clock read for both.
            let decodeStart = client.now()
            recorder.update(entering: acceptable ? .decoding : .validating) {
                $0.network = networkStart.duration(to: decodeStart)
                $0.bytesReceived = Int64(data.count)
            }
            if client.configuration.logsResponseBodies, logLevel <= .trace { traceBody(data, status: status) }
            guard acceptable else { throw fail(refused(status, data: data), sent: sent) }
            let value: Output
            do {
                value = try decoder.decode(data, head, json: client.jsonDecoder)
            } catch {
                let end = client.now()
                recorder.update { $0.decode = decodeStart.duration(to: end) }
                throw fail(Self.decodingFailure(error, of: Output.self, status: status.code, data: data), sent: sent)
            }
            let end = client.now()
            let metrics = recorder.updated {
                $0.decode = decodeStart.duration(to: end)
                $0.total = start.duration(to: end)
            }
            reportSuccess(status: status.code, metrics: metrics, authority: sent.authority)
            return DecodedResponse(value: value, head: head, metrics: metrics)
        }
    }

    /// The call's failure: `error` with the request it was for (kept when it names one) and the
    /// metrics so far, logged and told to the observers.
    func fail(_ error: NetworkError, sent: HTTPRequest?) -> NetworkError {
        var error = error
        if error.request == nil, let sent {
            error.request = NetworkError.RequestSummary(method: sent.method.rawValue, url: sent.urlText)
        }
        let end = client.now()
        error.metrics = recorder.updated { $0.total = start.duration(to: end) }
        reportFailure(error, authority: sent?.authority)
        return error
    }

    /// The failure for a status the call does not accept, with the start of the body and the
    /// error decoder's reading of it.
    func refused(_ status: HTTPResponse.Status, data: Data) -> NetworkError {
        var error = NetworkError(
            kind: .httpStatus, phase: .validating, message: "the server answered \(status.code) \(status.reasonPhrase)", status: status.code
        )
        error.responseBody = data.prefix(NetworkError.maximumRetainedBodyBytes)
        error.decodedErrorBody = settings.errorDecoder?.decode(data, client.jsonDecoder)
        return error
    }

    /// The failure for a decoder that threw `error`: a ``NetworkError`` it threw chose the call's
    /// error (a SOAP fault is one); anything else is a decoding failure.
    private static func decodingFailure(_ error: any Error, of output: Any.Type, status: Int, data: Data) -> NetworkError {
        var failure =
            error as? NetworkError
            ?? NetworkError(
                kind: .decoding, phase: .decoding, message: "the body could not be decoded as \(output): \(error)", status: status,
                underlying: error)
        failure.status = failure.status ?? status
        failure.responseBody = failure.responseBody ?? data.prefix(NetworkError.maximumRetainedBodyBytes)
        return failure
    }
}
