import CCurl
import Courier
import Foundation

/// One sending of a transfer's request, on one easy handle: what exists only while the handle is
/// on the multi handle.
///
/// The engine makes one when it takes the transfer (and a new one when it sends the request again
/// after libcurl's spurious HTTP/2 failures, see ``CurlTransfer/mayResend(after:)``), and releases
/// it with its handle when the transfer leaves the multi handle (``CurlEngine/release(_:)``). The
/// transfer's state holds it (``CurlTransferState``), so nothing of it outlives the handle.
struct CurlAttempt {
    /// The easy handle and the error buffer libcurl writes its messages into.
    let handle: CurlHandle
    /// The request's header lines, which libcurl reads until the handle is off the multi handle.
    /// Set while the handle is configured.
    var headerList: CurlHeaderList?
    /// The `CURLOPT_CONNECT_TO` entry of a host with an address override, which libcurl reads
    /// until the handle is off the multi handle; `nil` for every other call.
    var connectTo: UnsafeMutablePointer<curl_slist>?
    /// The response head being read.
    var head: CurlResponseHead
    /// The final head's `Content-Length` (`nil`: none, or a body that cannot have one), read once
    /// when the head arrives; it sizes the body's buffer and is the body's expected length.
    var announcedLength: Int64?
    /// Trailer bytes seen after the final head (libcurl hands trailers to the header callback);
    /// held to the head's byte limit.
    var trailerBytes = 0
    /// The request body as the read callback takes it.
    var upload: CurlUpload
    /// Request body bytes handed to libcurl in this attempt (back to 0 when it rewinds), for the
    /// call's progress.
    var sentBytes: Int64 = 0
    /// How often libcurl got ready to send the request on this handle.
    var requestsSent = 0
    /// Response body bytes taken.
    var receivedBytes = 0
    /// Whether libcurl holds back response bytes because the consumer is behind.
    var receivePaused = false
    /// Whether the final head waits for its whole body before its caller gets it
    /// (``CurlTransferState/flush(holdingWholeUpTo:makeBuffer:)``): the server has answered, so the
    /// request is not sent again below the caller, and a failure still reaches the caller after the head.
    var holdsHead = false
    /// Courier's own reason for aborting the transfer from a callback (too large, unreadable body).
    var failure: NetworkError? {
        get { failureBox?.error }
        set { failureBox = newValue.map(CurlFailureBox.init) }
    }
    /// ``failure``, boxed: a `NetworkError` is large, and the attempt moves with every transition
    /// of its transfer's state (a few per header line), so inline it cost a copy of its bytes each
    /// time (`memmove` was 5% of a small call's CPU, most of it from these moves).
    private var failureBox: CurlFailureBox?
    /// Whether libcurl ended the transfer with an error: its handle is then not reused.
    var handleFailed = false
    /// Counts callbacks that moved bytes either way (a counter, not a clock read, so the
    /// callbacks stay cheap). The engine's stall check compares it with what it saw last.
    var activity: UInt64 = 0
    /// The stall check: the count it saw last, and since when it has not changed (or since the
    /// attempt started or resumed from a pause).
    var stallWatch: (seen: UInt64, since: ContinuousClock.Instant)

    /// A new attempt on `handle` for a request with `body`, reading heads under `limits`.
    init(handle: CurlHandle, body: RequestBody?, limits: ResponseHeadLimits) {
        self.handle = handle
        head = CurlResponseHead(limits: limits)
        upload = CurlUpload(body)
        stallWatch = (0, .now)
    }

    /// The easy handle.
    var easy: UnsafeMutableRawPointer { handle.easy }
    /// libcurl's message for the last failure, or empty.
    var errorMessage: String { String(cString: handle.errorBuffer) }
    /// Whether libcurl holds the transfer back either way (waiting for a consumer or a producer,
    /// not for the server: the stall check leaves it alone).
    var isPaused: Bool { receivePaused || upload.isPaused }
    /// The `curl_easy_pause` mask for what is still paused.
    var pauseMask: Int32 { (receivePaused ? ccurl_pause_receiving : 0) | (upload.isPaused ? ccurl_pause_sending : 0) }

    /// A header line after the final head: a trailer, dropped but held to the head's byte limit.
    mutating func takeTrailer(_ line: UnsafeRawBufferPointer) -> CurlResponseHead.Line {
        activity &+= 1
        trailerBytes += line.count
        let limit = head.limits.maxBytes
        return trailerBytes > limit ? .invalid("the response has more than \(limit) bytes of trailer fields") : .partial
    }

    /// The stall limit counts from now (the attempt was resumed from a pause).
    mutating func restartStallWatch() {
        stallWatch = (activity, .now)
    }
}

/// A ``CurlAttempt``'s failure, out of line (set at most once or twice per transfer).
final class CurlFailureBox: Sendable {
    let error: NetworkError

    init(_ error: NetworkError) {
        self.error = error
    }
}
