import CCurl
import Courier

/// A libcurl call that returned something other than success: which call, and its code.
///
/// Internal to the adapter; it is mapped to `NetworkError` at the boundary.
struct CurlCallFailure: Error, CustomStringConvertible {
    /// What was being done, for example `curl_easy_setopt(CURLOPT_URL)`.
    let call: String
    /// The `CURLcode` or `CURLMcode` value.
    let code: Int
    /// libcurl's text for the code.
    let text: String

    var description: String { "\(call) failed with \(code): \(text)" }

    /// The failure as a `NetworkError`: nothing was sent, because this happens while setting up.
    var networkError: NetworkError {
        NetworkError(
            kind: code == Int(CURLE_UNKNOWN_OPTION.rawValue) || code == Int(CURLE_NOT_BUILT_IN.rawValue) ? .unsupported : .transportFailure,
            phase: .building, message: "libcurl refused the request setup: \(description)",
            nativeCode: .init(domain: "CURLcode", code: code)
        )
    }
}

/// The one place every libcurl return code is checked.
enum CurlCall {
    /// Checks an easy-interface code.
    /// - Parameters:
    ///   - code: What libcurl returned.
    ///   - call: What was called, for the error.
    /// - Throws: ``CurlCallFailure`` unless the code is `CURLE_OK`.
    @inline(__always)
    static func check(_ code: CURLcode, _ call: @autoclosure () -> String) throws(CurlCallFailure) {
        guard code != CURLE_OK else { return }
        throw CurlCallFailure(call: call(), code: Int(code.rawValue), text: String(cString: curl_easy_strerror(code)))
    }

    /// Checks a multi-interface code.
    /// - Parameters:
    ///   - code: What libcurl returned.
    ///   - call: What was called, for the error.
    /// - Throws: ``CurlCallFailure`` unless the code is `CURLM_OK`.
    @inline(__always)
    static func check(_ code: CURLMcode, _ call: @autoclosure () -> String) throws(CurlCallFailure) {
        guard code != CURLM_OK else { return }
        throw CurlCallFailure(call: call(), code: Int(code.rawValue), text: String(cString: curl_multi_strerror(code)))
    }
}
