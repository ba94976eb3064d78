import CCurl
import Courier

/// What the linked libcurl can do, read once at run time (the library on the machine may differ
/// from the headers Courier was built against).
enum CurlRuntime {
    /// The version as `0xXXYYZZ`.
    static let versionNumber = ccurl_version_number()
    /// The version as text, for example `7.88.1`.
    static let version = String(cString: ccurl_version_string())
    /// Whether libcurl was built with HTTP/2 (nghttp2).
    static let hasHTTP2 = ccurl_has_http2() != 0

    /// Whether cleartext HTTP/2 with prior knowledge works. Before 8.0, libcurl fails every request
    /// after the first on a reused prior-knowledge connection ("Error in the HTTP2 framing layer",
    /// curl issue 10634), so Courier refuses it there rather than failing at random.
    static let supportsCleartextHTTP2 = hasHTTP2 && versionNumber >= 0x08_00_00

    /// Whether HTTP/2 transfers may fail at random on a healthy multiplexed connection. Before 8.0
    /// a fraction of them do over TLS too (about 0.3% at 64 streams against the embedded server,
    /// the C reference as well as Courier; curl issue 10634): one fails with "Error in the HTTP2
    /// framing layer", libcurl closes the connection, and the other streams on it fail with a
    /// stream error or "Connection died". The engine then sends such a request again (see
    /// ``CurlTransfer/mayResend(after:)``).
    static let hasRandomHTTP2FramingErrors = hasHTTP2 && versionNumber < 0x08_00_00

    /// Whether libcurl fails a transfer whose TLS connection closed without `close_notify`
    /// (`CURLE_RECV_ERROR`). 8.14.1 does (measured with OpenSSL 3.0); 7.88.1 reads such a close as
    /// a clean end (it asks OpenSSL to ignore the missing alert), and reports of 8.7 and 8.13 say
    /// they still do too, so below 8.14 a body that ends only where the connection closes cannot
    /// be proven whole, and ``CurlTransfer/unprovenEnd`` fails it.
    static let detectsUncleanTLSClose = versionNumber >= 0x08_0E_00

    /// `CURLOPT_PROTOCOLS_STR` exists from 7.85.
    static let hasProtocolsString = versionNumber >= 0x07_55_00

    /// Called once, before the first handle: `curl_global_init` is not thread-safe on old versions.
    /// With ``CurlAllocationTorture/install()`` called first, libcurl gets the counting allocator.
    static let globalInit: CURLcode =
        CurlAllocationTorture.isInstalled ? CurlAllocationTorture.globalInit() : curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Checks that the library is usable for `preference` over `scheme` (`nil` means `http`).
    /// - Throws: `NetworkError/Kind/unsupported` when it is not.
    static func check(_ preference: HTTPVersionPreference, scheme: String?) throws(NetworkError) {
        if preference != .http1_1, !hasHTTP2 {
            throw NetworkError(
                kind: .unsupported, phase: .building,
                message: "the linked libcurl \(version) was built without HTTP/2; ask for HTTP/1.1 or install libcurl with nghttp2")
        }
        if preference == .http2PriorKnowledge, !supportsCleartextHTTP2, isCaseInsensitively(scheme ?? "http", "http") {
            throw NetworkError(
                kind: .unsupported, phase: .building,
                message:
                    "cleartext HTTP/2 (prior knowledge) is unsupported with the linked libcurl \(version): before 8.0 it fails every request after the first on a reused connection (curl issue 10634); use https with HTTP/2, or HTTP/1.1"
            )
        }
    }

    /// Whether `scheme` is `https`, in any case, without making a lowercased copy.
    static func isHTTPS(_ scheme: String?) -> Bool {
        guard let scheme else { return false }
        return isCaseInsensitively(scheme, "https")
    }

    /// Whether `text` equals the lowercase ASCII `lowercase`, ignoring ASCII case.
    static func isCaseInsensitively(_ text: String, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard text.utf8.count == expected.count else { return false }
        for (byte, wanted) in zip(text.utf8, expected) where byte | 0x20 != wanted {
            return false
        }
        return true
    }
}
