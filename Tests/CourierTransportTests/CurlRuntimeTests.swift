import Foundation
import Testing

@testable import CourierCurl

/// The test command runs the curl suites twice: against the system's libcurl (7.88 on Debian 12)
/// and against libcurl 8 (scripts/libcurl8.sh), naming the major version it expects in
/// `COURIER_EXPECT_LIBCURL_MAJOR`. This pins that the second run really loaded libcurl 8, and that
/// the version-dependent behaviour follows the library that is loaded.
@Suite("libcurl at run time")
struct CurlRuntimeTests {
    @Test("the loaded libcurl is the one the test command asked for; the < 8.0 workarounds follow it")
    func loadedVersion() {
        let major = Int(CurlRuntime.versionNumber >> 16)
        if let expected = ProcessInfo.processInfo.environment["COURIER_EXPECT_LIBCURL_MAJOR"].flatMap({ Int($0) }) {
            #expect(major == expected, "libcurl \(CurlRuntime.version) is loaded; the test command asked for \(expected).x")
        }
        #expect(CurlRuntime.version.hasPrefix("\(major)."))
        if CurlRuntime.hasHTTP2 {
            #expect(CurlRuntime.hasRandomHTTP2FramingErrors == (major < 8), "the HTTP/2 resend workaround is for libcurl < 8 only")
            #expect(CurlTransport.supportsCleartextHTTP2 == (major >= 8), "cleartext HTTP/2 must work on libcurl 8")
        }
    }
}
