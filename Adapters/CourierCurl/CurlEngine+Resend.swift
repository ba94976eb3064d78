import CCurl
import Courier
import Foundation
import Logging

// libcurl before 8.0 fails some HTTP/2 streams spuriously when a connection is reused; the
// engine sends such a request again, once per transfer (see `CurlTransfer.mayResend(after:)`).

extension CurlEngine {
    /// Sends the same request again on a fresh handle (see ``CurlTransfer/mayResend(after:)``).
    /// The caller never sees it; the call's logger says so at `debug`, with libcurl's reason.
    func resend(_ transfer: CurlTransfer, after code: CURLcode) throws(CurlCallFailure) {
        transfer.http2Resends += 1
        counters.withLock { $0.http2Resends += 1 }
        let logger = transfer.context.logger
        if logger.logLevel <= .debug {
            logger.debug(
                "courier.curl.http2_resent",
                metadata: [
                    "courier.attempt": .stringConvertible(transfer.http2Resends + 1),
                    "courier.error": .string(CurlErrorMapping.error(code: code, message: transfer.errorMessage, progress: .init()).message),
                ])
        }
        detach(transfer)
        transfer.prepareForNextResponse()
        transfer.lifecycle.restart()
        transfer.stallWatch = (transfer.activity, .now)  // The stall limit counts from the new attempt.
        try attach(transfer)
    }
}
