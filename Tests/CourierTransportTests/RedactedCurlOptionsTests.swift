import Courier
import CourierCurl
import Foundation
import Testing

/// `print`, `debugPrint`, interpolation and `dump` of the curl transport's options show no secret.
@Suite("Redacted descriptions: curl")
struct RedactedCurlOptionsTests {
    static func everyRendering(_ value: Any) -> String {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped].joined(separator: "\n")
    }

    @Test("the curl transport's TLS options: the key password never appears")
    func curlTLS() {
        var options = CurlTransport.TLSOptions()
        options.clientKeyFile = "/etc/key.pem"
        options.clientKeyPassword = "PASSWORDSECRET"
        var configuration = CurlTransport.Configuration()
        configuration.tls = options
        for rendering in [Self.everyRendering(options), Self.everyRendering(configuration)] {
            #expect(!rendering.contains("PASSWORDSECRET"), "\(rendering)")
            #expect(rendering.contains("/etc/key.pem"))
        }
    }
}
