/// How far one call (or a whole batch) has come, in bytes: what ``ProgressReporter`` delivers.
///
/// `bytesSent` counts the request body handed to the connection in the current attempt: a retry
/// or a redirect that sends the body again starts it from zero. `bytesReceived` counts the body
/// of the response being received as the server sends it (before decompression), and
/// `expectedBytesReceived` is its `Content-Length`: a redirect or a retry starts the count over
/// with the next response's head. A response served from the cache counts nothing; a transport
/// that decompresses by itself (urlsession) counts a compressed body decompressed, with no
/// expected length.
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes handed to the connection so far.
    public var bytesSent: Int64 = 0
    /// The request body's length, when known (`nil` for a stream of unknown length).
    public var expectedBytesSent: Int64?
    /// Response body bytes received so far, as sent (before decompression).
    public var bytesReceived: Int64 = 0
    /// The response body's announced length (`Content-Length`; 0 when the response has no
    /// body), when known.
    public var expectedBytesReceived: Int64?
    /// Whether this is the last report: the call (or the batch) has ended, successfully or not.
    public var isFinished = false

    /// A report with the given figures.
    /// - Parameters:
    ///   - bytesSent: Request body bytes sent.
    ///   - expectedBytesSent: The request body's length, when known.
    ///   - bytesReceived: Response body bytes received.
    ///   - expectedBytesReceived: The response body's length, when known.
    ///   - isFinished: Whether the transfer has ended.
    public init(
        bytesSent: Int64 = 0, expectedBytesSent: Int64? = nil, bytesReceived: Int64 = 0, expectedBytesReceived: Int64? = nil,
        isFinished: Bool = false
    ) {
        self.bytesSent = bytesSent
        self.expectedBytesSent = expectedBytesSent
        self.bytesReceived = bytesReceived
        self.expectedBytesReceived = expectedBytesReceived
        self.isFinished = isFinished
    }

    /// The share of the response received, between 0 and 1; `nil` while its length is unknown.
    public var fractionReceived: Double? {
        guard let expected = expectedBytesReceived else { return nil }
        return expected <= 0 ? 1 : min(1, Double(bytesReceived) / Double(expected))
    }

    /// The share of the request body sent, between 0 and 1; `nil` while its length is unknown.
    public var fractionSent: Double? {
        guard let expected = expectedBytesSent else { return nil }
        return expected <= 0 ? 1 : min(1, Double(bytesSent) / Double(expected))
    }
}
