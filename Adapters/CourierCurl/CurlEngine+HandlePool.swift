import CCurl
import Courier
import Foundation

// Easy handles: taken from the pool (or made) when a transfer goes on the multi handle, reset and
// returned when it comes off.

extension CurlEngine {
    /// Puts the transfer's handle on the multi handle, taking one from the pool.
    func attach(_ transfer: CurlTransfer) throws(CurlCallFailure) {
        guard let handle = pool.popLast() ?? CurlHandle.make() else {
            throw CurlCallFailure(call: "curl_easy_init", code: Int(CURLE_OUT_OF_MEMORY.rawValue), text: "no easy handle")
        }
        let easy = handle.easy
        handle.errorBuffer[0] = 0
        transfer.easy = easy
        transfer.errorBuffer = handle.errorBuffer
        active[easy] = transfer
        try CurlRequestSetup.configure(easy, for: transfer, configuration: configuration, scratch: &urlScratch)
        try CurlCall.check(curl_multi_add_handle(multi, easy), "curl_multi_add_handle")
        transfer.context.recorder.enter(.connect)
    }

    /// Takes the transfer's handle off the multi handle (which closes its connection or resets its
    /// HTTP/2 stream if it was still running) and returns it to the pool.
    func detach(_ transfer: CurlTransfer) {
        transfer.bodyBuffer?.releaseTransfer()
        transfer.uploadPump?.stop()
        transfer.uploadPaused = false
        guard let easy = transfer.easy else { return }
        // Removing a handle that is not on the multi handle is a no-op in libcurl; any other
        // failure leaves nothing to undo, so the handle is simply not reused.
        let removed = curl_multi_remove_handle(multi, easy)
        active[easy] = nil
        let errorBuffer = transfer.errorBuffer
        transfer.easy = nil
        transfer.errorBuffer = nil
        transfer.paused = false
        // A handle whose transfer failed is not reused: curl_easy_reset leaves some of a failed
        // transfer's state behind (libcurl 8.14 fails the handle's next transfer at once with
        // CURLE_SEND_FAIL_REWIND after one ended that way, without sending it).
        if removed == CURLM_OK, !transfer.handleFailed, pool.count < configuration.handlePoolSize, let errorBuffer {
            curl_easy_reset(easy)
            pool.append(CurlHandle(easy: easy, errorBuffer: errorBuffer))
        } else {
            curl_easy_cleanup(easy)
            errorBuffer?.deallocate()
        }
        transfer.headerList?.free()
        transfer.headerList = nil
    }
}
