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

    /// `CURLOPT_PROTOCOLS_STR` exists from 7.85.
    static let hasProtocolsString = versionNumber >= 0x07_55_00

    /// Called once, before the first handle: `curl_global_init` is not thread-safe on old versions.
    static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Checks that the library is usable for `preference` over `scheme`.
    /// - Throws: ``NetworkError/Kind/unsupported`` when it is not.
    static func check(_ preference: HTTPVersionPreference, scheme: String) throws(NetworkError) {
        if preference != .http1_1, !hasHTTP2 {
            throw NetworkError(
                kind: .unsupported, phase: .building,
                message: "the linked libcurl \(version) was built without HTTP/2; ask for HTTP/1.1 or install libcurl with nghttp2")
        }
        if preference == .http2PriorKnowledge, scheme == "http", !supportsCleartextHTTP2 {
            throw NetworkError(
                kind: .unsupported, phase: .building,
                message:
                    "cleartext HTTP/2 (prior knowledge) is unsupported with the linked libcurl \(version): before 8.0 it fails every request after the first on a reused connection (curl issue 10634); use https with HTTP/2, or HTTP/1.1"
            )
        }
    }
}
