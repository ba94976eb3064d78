import CCurl
import Courier
import Foundation
import Logging

// libcurl before 8.0 fails some HTTP/2 streams spuriously when a connection is reused; the
// engine sends such a request again, at most twice per transfer (see `CurlTransfer.mayResend(after:)`).

extension CurlEngine {
    /// Sends the same request again on a fresh handle (see ``CurlTransfer/mayResend(after:)``).
    /// The caller never sees it; the call's logger says so at `debug`, with libcurl's reason. The
    /// stall limit counts from the new attempt.
    func resend(_ transfer: CurlTransfer, after code: CURLcode) {
        guard let (taken, waiter) = transfer.state.takeForResend() else { return }
        var old = taken
        transfer.http2Resends += 1
        counters.withLock { $0.http2Resends += 1 }
        let logger = transfer.context.logger
        if logger.logLevel <= .debug {
            logger.debug(
                "courier.curl.http2_resent",
                metadata: [
                    "courier.attempt": .stringConvertible(transfer.http2Resends + 1),
                    "courier.error": .string(CurlErrorMapping.error(code: code, message: old.errorMessage, progress: .init()).message),
                ])
        }
        old.handleFailed = true
        release(old)
        attach(transfer, waiter)
    }
}
