import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Connection overrides: a Unix socket, and addresses for host names")
struct ConnectionOverridesTests {
    @Test("a base URL that names a Unix socket becomes http://localhost with the socket, in code and from a file")
    func unixSocketBaseURL() throws {
        let made = ClientConfiguration(baseURL: "http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.41")
        #expect(made.baseURL == "http://localhost/v1.41" && made.connectionOverrides.unixSocket == "/var/run/docker.sock")
        var set = ClientConfiguration()
        set.baseURL = "HTTPS+UNIX://%2Ftmp%2Fs.sock?x=1"
        #expect(set.baseURL == "https://localhost?x=1" && set.connectionOverrides.unixSocket == "/tmp/s.sock")
        let loaded = try ClientConfiguration().applyingJSON(Data(#"{"baseURL": "http+unix://%2Frun%2Fd.sock/"}"#.utf8), source: "f.json")
        #expect(loaded.baseURL == "http://localhost/" && loaded.connectionOverrides.unixSocket == "/run/d.sock")
        #expect(loaded.transportSettingKeys.contains("connections.unixSocket"))
        // Not a socket URL: left as it is.
        #expect(ClientConfiguration(baseURL: "http+unix:///x").connectionOverrides.unixSocket == nil)
        #expect(ClientConfiguration(baseURL: "http+unix://u:p@%2Fs/").connectionOverrides.unixSocket == nil)
    }

    @Test("a later base URL that names no socket takes away the socket an earlier one named, and only that")
    func baseURLSetTwice() throws {
        var configuration = ClientConfiguration(baseURL: "http+unix://%2Frun%2Fd.sock/")
        configuration.baseURL = "https://api.prod"
        #expect(configuration.connectionOverrides.unixSocket == nil && configuration.baseURL == "https://api.prod")
        let file = try ClientConfiguration(baseURL: "http+unix://%2Frun%2Fd.sock/")
            .applyingEnvironment(["COURIER_BASE_URL": "https://api.prod"])
        #expect(file.connectionOverrides.unixSocket == nil)
        // A socket set on its own stays whatever the base URL.
        var own = ClientConfiguration()
        own.connectionOverrides.unixSocket = "/run/own.sock"
        own.baseURL = "http://localhost/"
        own.baseURL = "http://localhost/v2"
        #expect(own.connectionOverrides.unixSocket == "/run/own.sock")
    }

    @Test("socket paths and address entries are checked, naming the key")
    func validation() throws {
        var configuration = ClientConfiguration()
        for bad in ["relative.sock", "/" + String(repeating: "a", count: 107), "/tmp/a\nb"] {
            configuration.connectionOverrides.unixSocket = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try configuration.validate() }
        }
        configuration.connectionOverrides.unixSocket = "/" + String(repeating: "a", count: 106)
        try configuration.validate()
        configuration.connectionOverrides.addresses = ["api.example": "10.0.0.1"]
        #expect(throws: ConfigurationError.self, "a socket and addresses together") { try configuration.validate() }
        configuration.connectionOverrides = .none
        for bad in [["API.example": "10.0.0.1"], ["api.example.": "10.0.0.1"], ["api.example": "0x7f.1"], ["api.example": "::1"]] {
            configuration.connectionOverrides.addresses = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try configuration.validate() }
        }
        configuration.connectionOverrides.addresses = ["api.example": "[::1]"]
        try configuration.validate()
        configuration.connectionOverrides.addresses = ["api.example": "10.0.0.1"]
        try configuration.validate()
        configuration.proxy = try ProxyConfiguration(server: "http://proxy:1")
        do {
            try configuration.validate()
            Issue.record("an address override with a proxy was taken")
        } catch {
            #expect(error.key == "connections.addresses", "\(error)")
        }
    }

    @Test("the addresses key: host=address, IPv6 bare or bracketed; the decision reads the hop's host")
    func addresses() throws {
        let loaded = try ClientConfiguration.load(environment: [
            "COURIER_CONNECTIONS_ADDRESSES": "api.example=10.0.0.7,v6.example=::1,Named.Example.=[fd00::2],alias.example=other.internal"
        ])
        let overrides = loaded.connectionOverrides
        #expect(
            overrides.addresses == [
                "api.example": "10.0.0.7", "v6.example": "[::1]", "named.example": "[fd00::2]", "alias.example": "other.internal",
            ])
        func address(_ authority: String) -> String? {
            overrides.address(for: HTTPRequest(method: .get, scheme: "https", authority: authority, path: "/"))
        }
        #expect(address("api.example:8443") == "10.0.0.7" && address("named.example.") == "[fd00::2]")
        #expect(address("other.example") == nil && address("sub.api.example") == nil)
        for bad in [
            "api.example", "=10.0.0.1", "api.example=", "api example=1.2.3.4", "[::1]=10.0.0.1", "a.example=1.2.3.999",
            "a.example=10.0.0.1:8080",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ClientConfiguration.load(environment: ["COURIER_CONNECTIONS_ADDRESSES": bad])
            }
        }
    }
}
