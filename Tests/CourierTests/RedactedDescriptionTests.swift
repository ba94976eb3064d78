import Foundation
import Testing

@testable import Courier

/// `print`, `debugPrint`, interpolation and `dump` of a configuration show no secret.
@Suite("Redacted descriptions")
struct RedactedDescriptionTests {
    static func everyRendering(_ value: Any) -> String {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped].joined(separator: "\n")
    }

    @Test("a client configuration: credentials' values, the key password and token query values never appear")
    func configuration() {
        var configuration = ClientConfiguration(baseURL: "https://api.test/v1?access_token=QUERYSECRET")
        configuration.defaultHeaders = [
            "Authorization": "Bearer AUTHSECRET", "X-Api-Key": "KEYSECRET", "X-Tenant": "TENANTSECRET", "Accept": "application/json",
        ]
        configuration.secretHeaderNames = ["x-tenant"]
        let text = Self.everyRendering(configuration)
        for secret in ["QUERYSECRET", "AUTHSECRET", "KEYSECRET", "TENANTSECRET"] { #expect(!text.contains(secret), "\(secret): \(text)") }
        #expect(text.contains("application/json"))
        #expect(text.contains("api.test"))

        let headers: RequestHeaders = ["Cookie": "COOKIESECRET", "X-Trace": "visible"]
        let shown = Self.everyRendering(headers)
        #expect(!shown.contains("COOKIESECRET"))
        #expect(shown.contains("visible"))
    }
}
