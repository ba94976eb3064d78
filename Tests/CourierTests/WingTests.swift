import Courier
import CourierCache
import CourierCookies
import CourierMock
import CourierResilience
import Foundation
import HTTPTypes
import Testing

/// The one registration point for wings (`Wing`), through the cookie jar, the wing that uses it.
@Suite("Wings: found once, keys in the one table, nothing when off")
struct WingTests {
    @Test("the kernel's table names each wing by its LinkedWing type and lists the wing's own keys")
    func table() {
        let wings: [any Wing.Type] = [CourierCookies.LinkedWing.self, CourierResilience.LinkedWing.self, CourierCache.LinkedWing.self]
        #expect(knownWings.map(\.linkedType) == wings.map { _mangledTypeName($0) })
        #expect(knownWings.map(\.product) == ["CourierCookies", "CourierResilience", "CourierCache"])
        #expect(knownWings.map(\.sections) == wings.map { $0.keys.filter { $0.kind == .section }.map(\.name) })
        #expect(knownWings.map(\.keys) == wings.map { $0.keys.map(\.name) })
        #expect(linkedWings.map { ObjectIdentifier($0) } == wings.map { ObjectIdentifier($0) })
    }

    @Test("a linked wing's keys are in the one key table, and the environment and a file set them")
    func keys() throws {
        let names = ConfigurationKey.all.map(\.name)
        #expect(names.suffix(10) == knownWings.flatMap(\.keys))
        let fromEnvironment = try ClientConfiguration.load(environment: [
            "COURIER_COOKIES": "true", "COURIER_COOKIE_SUFFIXES": "*.tenants.acme.test",
        ])
        #expect(fromEnvironment.keepsCookies)
        #expect(fromEnvironment.cookieSuffixes.isPublicSuffix("blue.tenants.acme.test"))
        #expect(fromEnvironment.description.contains("cookies: on"))
        let fromFile = try ClientConfiguration().applyingJSON(Data("{\"cookies\": true}".utf8), source: "f.json")
        #expect(fromFile.keepsCookies)
        let error = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_COOKIES": "maybe"])
        }
        #expect(error?.variable == "COURIER_COOKIES")
    }

    @Test("a wing the configuration leaves off adds no link and keeps nothing; on, it adds its hop link and its value")
    func offAndOn() throws {
        let mock = MockTransport()
        let off = try NetworkClient(configuration: ClientConfiguration(baseURL: "https://api.test"), transport: mock)
        #expect(off.cookieJar == nil)
        #expect(!off.linkOrder.contains("CookieJarLink"))
        #expect(!ClientConfiguration().description.contains("cookies"))
        var configuration = ClientConfiguration(baseURL: "https://api.test")
        configuration.keepsCookies = true
        let on = try NetworkClient(configuration: configuration, transport: mock)
        #expect(on.cookieJar != nil)
        let order = on.linkOrder
        #expect(order.firstIndex(of: "FollowUpLink").map { order[$0 + 1] } == "CookieJarLink")
        // Each client has a jar of its own.
        let other = try NetworkClient(configuration: configuration, transport: mock)
        #expect(other.cookieJar !== on.cookieJar)
    }

    @Test("a transport that joins repeated response fields cannot carry the jar: the client refuses it at start")
    func joinedFields() throws {
        struct Joining: Transport {
            var name: String { "joining" }
            var joinsRepeatedResponseFields: Bool { true }
            func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
                TransportResponse(head: HTTPResponse(status: .ok))
            }
            func shutdown() async {}
        }
        var configuration = ClientConfiguration(baseURL: "https://api.test")
        configuration.keepsCookies = true
        let error = #expect(throws: ConfigurationError.self) { _ = try NetworkClient(configuration: configuration, transport: Joining()) }
        #expect(error?.key == "cookies")
        configuration.keepsCookies = false
        #expect(throws: Never.self) { _ = try NetworkClient(configuration: configuration, transport: Joining()) }
    }

    /// A wing the runtime does not find (not in the kernel's table).
    enum UnknownWing: Wing {
        static var keys: [ConfigurationKey] { [] }
        static func parts(for setup: WingSetup) throws(ConfigurationError) -> WingParts? { nil }
        static func describe(_ configuration: ClientConfiguration) -> [String] { [] }
    }

    @Test("settings of a wing the runtime did not find are refused when a client is made, not ignored")
    func settingsOfAWingNotFound() throws {
        var configuration = ClientConfiguration(baseURL: "https://api.test")
        configuration.wings[Int.self, of: UnknownWing.self, key: "unknown.setting", default: 0] = 1
        let error = #expect(throws: ConfigurationError.self) {
            _ = try NetworkClient(configuration: configuration, transport: MockTransport())
        }
        #expect(error?.key == "unknown.setting")
        // The linked wings' own settings are fine.
        configuration = ClientConfiguration(baseURL: "https://api.test")
        configuration.keepsCookies = true
        configuration.cache = .memory()
        #expect(throws: Never.self) { _ = try NetworkClient(configuration: configuration, transport: MockTransport()) }
    }

    @Test("every wing in this program is linked, so no key is listed as a key of a wing not linked")
    func nothingUnlinked() {
        #expect(ConfigurationKey.unlinked.isEmpty)
    }

    @Test("a section in a file may be true (on, with its defaults) or false (off), the cache's as the kernel's")
    func sectionFlags() throws {
        let on = try ClientConfiguration().applyingJSON(Data(#"{"cache": true, "retry": true}"#.utf8), source: "f.json")
        #expect(on.cache != nil && on.retry != nil)
        let off = try on.applyingJSON(Data(#"{"cache": false, "retry": false}"#.utf8), source: "f.json")
        #expect(off.cache == nil && off.retry == nil)
    }

    @Test("the words that turn a key off are the flag's: false, 0, no")
    func turnsOff() {
        for word in ["false", " 0", "NO"] { #expect(ConfigurationKey.Unlinked.turnsOff(word)) }
        for word in ["true", "1", "yes", "maybe"] { #expect(!ConfigurationKey.Unlinked.turnsOff(word)) }
    }
}
