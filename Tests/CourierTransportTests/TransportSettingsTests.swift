import Courier
import CourierConformance
import CourierCurl
import CourierMock
import CourierTestServer
import CourierTestSupport
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// The client configuration's transport settings (HTTP version, connection limits, stall limit,
/// TLS) reach every transport, or the transport refuses to start naming the key.
@Suite("Transport settings from the client configuration")
struct TransportSettingsTests {
    /// One setting on one transport, and the key it must be refused with (`nil`: accepted).
    struct Row: Sendable, CustomTestStringConvertible {
        var transport: String
        var setting: String
        var refusedKey: String?
        var testDescription: String { "\(transport) with \(setting) → \(refusedKey.map { "refused: \($0)" } ?? "accepted")" }
    }

    static func apply(_ setting: String, to configuration: inout ClientConfiguration) {
        switch setting {
        case "httpVersion 1.1": configuration.httpVersion = .http1_1
        case "httpVersion 2-prior-knowledge": configuration.httpVersion = .http2PriorKnowledge
        case "maxConnections": configuration.maxConnections = 8
        case "maxConnectionsPerHost": configuration.maxConnectionsPerHost = 2
        case "stallTimeout": configuration.stallTimeout = .seconds(5)
        case "tls.caPEM": configuration.tls.caPEM = TestCertificates.caPEM
        case "tls.pinnedPublicKey": configuration.tls.pinnedPublicKey = TestCertificates.serverPublicKeyPin
        default: Issue.record("unknown setting \(setting)")
        }
    }

    static let rows: [Row] = {
        var rows: [Row] = []
        let settings = [
            "httpVersion 1.1", "httpVersion 2-prior-knowledge", "maxConnections", "maxConnectionsPerHost", "stallTimeout", "tls.caPEM",
            "tls.pinnedPublicKey",
        ]
        let refusedByURLSession: [String: String] = [
            "httpVersion 1.1": "httpVersion", "httpVersion 2-prior-knowledge": "httpVersion", "maxConnections": "connections.maxTotal",
            "tls.caPEM": "tls.caPEM", "tls.pinnedPublicKey": "tls.pinnedPublicKey",
        ]
        let refusedByAHC: [String: String] = [
            "httpVersion 2-prior-knowledge": "httpVersion", "maxConnections": "connections.maxTotal",
            "tls.pinnedPublicKey": "tls.pinnedPublicKey",
        ]
        for setting in settings {
            rows.append(Row(transport: "curl", setting: setting, refusedKey: nil))
            rows.append(Row(transport: "urlsession", setting: setting, refusedKey: refusedByURLSession[setting]))
            #if AsyncHTTPClient
                rows.append(Row(transport: "ahc", setting: setting, refusedKey: refusedByAHC[setting]))
            #endif
        }
        return rows
    }()

    static let registry: TransportRegistry = {
        #if AsyncHTTPClient
            TransportRegistry([.curl(), .urlSession(), .asyncHTTPClient()])
        #else
            TransportRegistry([.curl(), .urlSession()])
        #endif
    }()

    @Test("each setting is honoured or refused by name, never dropped", arguments: rows)
    func acceptedOrRefused(row: Row) async throws {
        var configuration = ClientConfiguration(baseURL: "https://localhost:1", transport: row.transport)
        Self.apply(row.setting, to: &configuration)
        do {
            let client = try NetworkClient(configuration: configuration, registry: Self.registry)
            #expect(row.refusedKey == nil, "\(row.transport) accepted \(row.setting)")
            await client.shutdown()
        } catch let error as ConfigurationError {
            #expect(error.key == row.refusedKey, "\(error)")
            #expect(error.allowed.contains(row.transport))
        }
    }

    /// The configuration key a setting of ``rows`` sets.
    static func key(of setting: String) -> String {
        let keys = [
            "maxConnections": "connections.maxTotal", "maxConnectionsPerHost": "connections.maxPerHost", "stallTimeout": "timeouts.stall",
        ]
        return keys[setting] ?? String(setting.prefix { $0 != " " })
    }

    /// The transport `name` made in code: with its defaults, or from `configuration` through its
    /// `Configuration.applying(_:)`.
    static func madeInCode(_ name: String, from configuration: ClientConfiguration?) throws -> any Transport {
        switch name {
        case "curl": return try CurlTransport(configuration: configuration.map { CurlTransport.Configuration().applying($0) } ?? .init())
        case "urlsession":
            return URLSessionTransport(
                configuration: try configuration.map { try URLSessionTransport.Configuration().applying($0) } ?? .init())
        default:
            #if AsyncHTTPClient
                return try AsyncHTTPClientTransport(
                    configuration: try configuration.map { try AsyncHTTPClientTransport.Configuration().applying($0) } ?? .init())
            #else
                throw ConfigurationError(key: "transport", value: name, allowed: "curl, urlsession", source: "test")
            #endif
        }
    }

    @Test(
        "made in code: a setting the transport was not made with is refused by name; made from the configuration, it is honoured",
        arguments: rows)
    func madeInCode(row: Row) async throws {
        var configuration = ClientConfiguration(baseURL: "https://localhost:1", transport: row.transport)
        Self.apply(row.setting, to: &configuration)
        // Made with its defaults: the configuration's value would vanish, so the client refuses it.
        let plain = try Self.madeInCode(row.transport, from: nil)
        #expect {
            try NetworkClient(configuration: configuration, transport: plain)
        } throws: { error in
            (error as? ConfigurationError)?.key == (row.refusedKey ?? Self.key(of: row.setting))
        }
        await plain.shutdown()
        // Made from the configuration: the same outcome as the registry's.
        do {
            let carried = try Self.madeInCode(row.transport, from: configuration)
            #expect(row.refusedKey == nil, "\(row.transport) was made with \(row.setting)")
            let client = try NetworkClient(configuration: configuration, transport: carried)
            await client.shutdown()
        } catch let error as ConfigurationError {
            #expect(error.key == row.refusedKey, "\(error)")
        }
    }

    @Test("httpVersion 2, every transport's own default, is accepted by each (URLSession offers that version only)")
    func http2Accepted() async throws {
        var configuration = ClientConfiguration(baseURL: "https://localhost:1")
        configuration.httpVersion = .http2
        for name in ["curl", "urlsession"] + (Self.registry.names.contains("ahc") ? ["ahc"] : []) {
            configuration.transport = name
            let client = try NetworkClient(configuration: configuration, registry: Self.registry)
            await client.shutdown()
            let plain = try Self.madeInCode(name, from: nil)
            let madeInCode = try NetworkClient(configuration: configuration, transport: plain)
            await madeInCode.shutdown()
        }
    }

    @Test("made in code: the mock takes every setting; a transport that reads none refuses each by name")
    func mockAndForeignTransports() async throws {
        for setting in ["httpVersion 1.1", "maxConnections", "maxConnectionsPerHost", "stallTimeout", "tls.caPEM", "tls.pinnedPublicKey"] {
            var configuration = ClientConfiguration(baseURL: "https://localhost:1")
            Self.apply(setting, to: &configuration)
            let mock = try NetworkClient(configuration: configuration, transport: MockTransport())
            await mock.shutdown()
            #expect {
                try NetworkClient(configuration: configuration, transport: ForeignTransport())
            } throws: { error in
                (error as? ConfigurationError)?.key == Self.key(of: setting)
            }
        }
        // With no transport setting, a transport that reads none is fine.
        let plain = try NetworkClient(configuration: ClientConfiguration(baseURL: "https://localhost:1"), transport: ForeignTransport())
        await plain.shutdown()
    }

    #if AsyncHTTPClient
        @Test("ahc made in code: a connect timeout other than the default must be the transport's own")
        func ahcConnectTimeout() async throws {
            var configuration = ClientConfiguration(baseURL: "https://localhost:1", transport: "ahc")
            configuration.connectTimeout = .seconds(3)
            let plain = try AsyncHTTPClientTransport()
            #expect {
                try NetworkClient(configuration: configuration, transport: plain)
            } throws: { error in
                (error as? ConfigurationError)?.key == "timeouts.connect"
            }
            await plain.shutdown()
            let carried = try AsyncHTTPClientTransport(configuration: .init().applying(configuration))
            #expect(carried.configuration.connectTimeout == .seconds(3))
            let client = try NetworkClient(configuration: configuration, transport: carried)
            await client.shutdown()
        }
    #endif

    @Test("curl: the public key pin from the configuration is enforced")
    func curlPin() async throws {
        try await withServer(mode: .tls) { server in
            for (pin, accepted) in [
                (TestCertificates.serverPublicKeyPin, true), ("sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", false),
            ] {
                var configuration = ClientConfiguration(baseURL: server.baseURL, transport: "curl")
                configuration.tls.caPEM = TestCertificates.caPEM
                configuration.tls.pinnedPublicKey = pin
                let client = try NetworkClient(configuration: configuration, registry: Self.registry)
                if accepted {
                    let body = try await client.send(RawEndpoint(path: "bytes/10"))
                    #expect(body.count == 10)
                } else {
                    await expectNetworkError(.tlsFailure) { try await client.send(RawEndpoint(path: "bytes/10")) }
                }
                await client.shutdown()
            }
        }
    }

    @Test("the HTTP version from the configuration is the one negotiated", arguments: ["curl", "ahc"])
    func httpVersion(transport: String) async throws {
        guard Self.registry.names.contains(transport) else { return }  // ahc needs the package trait
        try await withServer(mode: .tls) { server in
            for (version, expected) in [(HTTPVersionPreference.http1_1, "1.1"), (.http2, "2")] {
                var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport)
                configuration.tls.caPEM = TestCertificates.caPEM
                configuration.httpVersion = version
                let client = try NetworkClient(configuration: configuration, registry: Self.registry)
                let response = try await client.response(for: RawEndpoint(path: "bytes/10"))
                #expect(response.metrics.httpVersion == expected, "\(transport) asked for \(version)")
                await client.shutdown()
            }
        }
    }

    @Test("a per-host connection limit of 1 from the configuration serialises HTTP/1.1 calls", arguments: ["curl", "urlsession", "ahc"])
    func perHostLimit(transport: String) async throws {
        guard Self.registry.names.contains(transport) else { return }  // ahc needs the package trait
        try await withServer { server in
            var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport)
            configuration.maxConnectionsPerHost = 1
            configuration.httpVersion = transport == "urlsession" ? nil : .http1_1
            let client = try NetworkClient(configuration: configuration, registry: Self.registry)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<4 {
                    group.addTask { _ = try await client.send(RawEndpoint(path: "delay/100", query: [QueryItem("n", "\(index)")])) }
                }
                try await group.waitForAll()
            }
            #expect(server.maxRequestsInFlight == 1, "\(transport): \(server.maxRequestsInFlight) in flight")
            await client.shutdown()
        }
    }

    #if AsyncHTTPClient
        @Test("ahc: a client certificate from the configuration is loaded, and a bad key file is refused by name")
        func ahcClientCertificate() async throws {
            let directory = FileManager.default.temporaryDirectory
            let certificate = directory.appendingPathComponent("courier-client-\(UUID().uuidString).pem")
            let key = directory.appendingPathComponent("courier-client-\(UUID().uuidString).key")
            defer {
                try? FileManager.default.removeItem(at: certificate)
                try? FileManager.default.removeItem(at: key)
            }
            try Data(TestCertificates.serverCertificatePEM.utf8).write(to: certificate)
            try Data(TestCertificates.serverKeyPEM.utf8).write(to: key)
            var configuration = ClientConfiguration(baseURL: "https://localhost:1", transport: "ahc")
            configuration.tls.clientCertificateFile = certificate.path
            configuration.tls.clientKeyFile = key.path
            let client = try NetworkClient(configuration: configuration, registry: Self.registry)
            await client.shutdown()
            configuration.tls.clientKeyFile = certificate.path  // a certificate is not a key
            do {
                _ = try NetworkClient(configuration: configuration, registry: Self.registry)
                Issue.record("a file without a private key was accepted")
            } catch let error as ConfigurationError {
                #expect(error.key == "ahc.clientKeyFile")
            }
        }
    #endif
}

/// A transport written outside Courier that reads none of the configuration's transport settings.
struct ForeignTransport: Transport {
    var name: String { "foreign" }
    func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
        TransportResponse(head: HTTPResponse(status: .ok))
    }
    func shutdown() async {}
}
