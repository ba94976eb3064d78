import Foundation
import HTTPTypes

extension Call {
    /// A streamed call: opened (see ``open()``), its status checked, and its body handed over
    /// wrapped so that the body's end closes and reports the call.
    func openStream() async throws(NetworkError) -> StreamedResponse {
        if let buildFailure { throw fail(buildFailure, sent: nil) }
        let opened: OpenedCall
        do throws(NetworkError) {
            opened = try await open()
        } catch {
            throw fail(error, sent: request)
        }
        let scope = opened.scope
        let head = opened.response.head
        recorder.enter(.receiving)
        guard settings.statusValidation.isAcceptable(head.status.code) else {
            // Refused: the start of the body goes into the error, as for a buffered call.
            var failure: NetworkError
            do {
                let data = try await opened.response.body.collect(upTo: scope.maxResponseBytes)
                let decodeStart = client.now()
                recorder.update(entering: .validating) {
                    $0.network = scope.networkStart.duration(to: decodeStart)
                    $0.bytesReceived = Int64(data.count)
                }
                failure = refused(head.status, data: data)
            } catch {
                failure = scope.failure(error)
            }
            scope.end()
            throw fail(failure, sent: request)
        }
        if let whole = try? opened.response.body.bufferedBytes(upTo: scope.maxResponseBytes) {
            // The transport had the whole body by the head (a small response): the call ends now,
            // and the caller reads the bytes from memory.
            scope.end()
            let metrics = succeeded(head.status.code, bytes: Int64(whole.count), scope: scope, authority: request.authority)
            return StreamedResponse(head: head, body: ResponseBody(data: whole), metrics: metrics)
        }
        // A long transfer's body is bounded by its stall limit and end, not by the head's deadline.
        let watch = bounds.map { BodyWatch($0, signal: scope.signal, clock: context.clock) }
        if watch != nil { scope.disarm() }
        let source = StreamedCallBody(body: opened.response.body, limit: scope.maxResponseBytes, watch: watch) { [self] bytes, error in
            // The alarm goes first (the outcome is settled); the call ends once it is reported.
            scope.disarm()
            defer { scope.end() }
            if let error {
                recorder.update { $0.bytesReceived = bytes }
                return fail(watch?.failure ?? scope.failure(error), sent: request)
            }
            _ = succeeded(head.status.code, bytes: bytes, scope: scope, authority: request.authority)
            return nil
        }
        return StreamedResponse(
            head: head, body: ResponseBody(source: source, expectedLength: opened.response.body.expectedLength),
            metrics: recorder.metrics)
    }

    /// The streamed call's end, once its whole body was read: the metrics, the log line and the observers.
    private func succeeded(_ status: Int, bytes: Int64, scope: CallScope, authority: String?) -> RequestMetrics {
        let end = client.now()
        let metrics = recorder.updated {
            $0.network = scope.networkStart.duration(to: end)
            $0.bytesReceived = bytes
            $0.total = start.duration(to: end)
        }
        reportSuccess(status: status, metrics: metrics, authority: authority)
        return metrics
    }
}
