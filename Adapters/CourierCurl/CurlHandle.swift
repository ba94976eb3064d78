import CCurl

/// An easy handle with the error buffer libcurl writes its messages into, kept together in the
/// engine's pool so that a transfer allocates neither.
struct CurlHandle {
    /// The easy handle.
    let easy: UnsafeMutableRawPointer
    /// `CURL_ERROR_SIZE` bytes plus a terminator, set as `CURLOPT_ERRORBUFFER` for each transfer.
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// A new easy handle with a zeroed error buffer, or `nil` when libcurl cannot make one.
    static func make() -> CurlHandle? {
        guard let easy = curl_easy_init() else { return nil }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        buffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return CurlHandle(easy: easy, errorBuffer: buffer)
    }

    /// Frees the handle and its buffer.
    func release() {
        curl_easy_cleanup(easy)
        errorBuffer.deallocate()
    }
}
