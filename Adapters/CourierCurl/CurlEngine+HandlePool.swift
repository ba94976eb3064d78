import CCurl
import Courier
import Foundation

// Attempts: a handle taken from the pool (or made and prepared) and configured when a transfer
// goes on the multi handle; returned to the pool, its options kept, when it comes off.

extension CurlEngine {
    /// Makes the transfer's attempt and puts it on the multi handle; fails the caller when it
    /// cannot.
    func attach(_ transfer: CurlTransfer, _ waiter: CurlHeadWaiter) {
        let handle: CurlHandle
        do {
            handle = try takeHandle()
        } catch {
            apply(transfer.state.attachFailed(waiter, error.networkError, release: nil), to: transfer)
            return
        }
        handle.errorBuffer[0] = 0
        var attempt = CurlAttempt(handle: handle, body: transfer.body, limits: transfer.context.responseHeadLimits)
        do {
            try CurlRequestSetup.configure(&attempt, for: transfer, configuration: configuration, scratch: &urlScratch)
        } catch {
            attempt.handleFailed = true  // Half configured: not reused.
            apply(transfer.state.attachFailed(waiter, error.networkError, release: attempt), to: transfer)
            return
        }
        let easy = attempt.easy
        let refused = transfer.state.attached(consume attempt, waiter)
        guard case .none = refused else { return apply(refused, to: transfer) }
        active[easy] = transfer
        do {
            try CurlCall.check(curl_multi_add_handle(multi, easy), "curl_multi_add_handle")
        } catch {
            apply(transfer.state.stop(error.networkError), to: transfer)
            return
        }
        transfer.context.recorder.enter(.connect)
    }

    /// Takes an attempt's handle off the multi handle (which closes its connection or resets its
    /// HTTP/2 stream if it was still running) and returns it to the pool; frees its header list
    /// and stops its upload's producer.
    func release(_ attempt: CurlAttempt) {
        attempt.upload.stop()
        let easy = attempt.easy
        // Removing a handle that is not on the multi handle is a no-op in libcurl; any other
        // failure leaves nothing to undo, so the handle is simply not reused.
        let removed = curl_multi_remove_handle(multi, easy)
        active[easy] = nil
        // A handle whose transfer failed is not reused: libcurl may keep some of a failed
        // transfer's state on it (8.14 fails the handle's next transfer at once with
        // CURLE_SEND_FAIL_REWIND after one ended that way, without sending it). A reused handle
        // keeps its options: the next transfer's `CurlRequestSetup.configure` sets each one a
        // transfer may set.
        if removed == CURLM_OK, !attempt.handleFailed, pool.count < configuration.handlePoolSize, forgetLists(easy) {
            pool.append(attempt.handle)
        } else {
            attempt.handle.release()
        }
        attempt.headerList?.free()
        if let connectTo = attempt.connectTo { curl_slist_free_all(connectTo) }
    }

    /// Points a pooled handle at no header list and no `CONNECT_TO` list, both freed with the
    /// attempt; `false` when libcurl refused (the handle is then not reused).
    private func forgetLists(_ easy: UnsafeMutableRawPointer) -> Bool {
        ccurl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, nil) == CURLE_OK
            && ccurl_easy_setopt_pointer(easy, CURLOPT_CONNECT_TO, nil) == CURLE_OK
    }

    /// A handle from the pool, or a new one with the options every transfer shares
    /// (``CurlRequestSetup/prepare(_:connections:configuration:)``).
    private func takeHandle() throws(CurlCallFailure) -> CurlHandle {
        if let handle = pool.popLast() { return handle }
        guard let handle = CurlHandle.make() else {
            throw CurlCallFailure(call: "curl_easy_init", code: Int(CURLE_OUT_OF_MEMORY.rawValue), text: "no easy handle")
        }
        do {
            try CurlRequestSetup.prepare(handle, connections: connections, configuration: configuration)
        } catch {
            handle.release()
            throw error
        }
        counters.withLock { $0.handlesMade += 1 }
        return handle
    }
}
