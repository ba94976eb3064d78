import Courier
import CourierConformance
import CourierCurl
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// Client certificates against a server that requires one (``TestServer/Mode/mutualTLS``): the
/// certificate from the configuration is presented, and a call without one fails as a TLS failure.
@Suite(
    "Mutual TLS",
    .enabled(
        if: IsolatedSuite.mutualTLS.runsHere,
        "runs in a child process of its own (IsolatedSuiteTests); alone: COURIER_DEVELOPMENT=1 COURIER_ISOLATED_SUITE=MutualTLSTests swift test --filter MutualTLSTests"
    ))
struct MutualTLSTests {
    static let registry: TransportRegistry = {
        #if AsyncHTTPClient
            TransportRegistry([.curl(), .asyncHTTPClient()])
        #else
            TransportRegistry([.curl()])
        #endif
    }()

    /// The client certificate and its keys as files, removed when `body` returns.
    struct ClientFiles {
        let certificate: String
        let key: String
        let encryptedKey: String
    }

    static func withClientFiles<T>(_ body: (ClientFiles) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = ClientFiles(
            certificate: directory.appendingPathComponent("client.pem").path,
            key: directory.appendingPathComponent("client.key").path,
            encryptedKey: directory.appendingPathComponent("client.enc.key").path)
        try Data(TestCertificates.clientCertificatePEM.utf8).write(to: URL(fileURLWithPath: files.certificate))
        try Data(TestCertificates.clientKeyPEM.utf8).write(to: URL(fileURLWithPath: files.key))
        try Data(TestCertificates.clientEncryptedKeyPEM.utf8).write(to: URL(fileURLWithPath: files.encryptedKey))
        return try await body(files)
    }

    static func client(
        _ transport: String, server: TestServer, version: HTTPVersionPreference, certificate: String?, key: String?
    ) throws -> NetworkClient {
        var configuration = ClientConfiguration(baseURL: server.baseURL, transport: transport)
        configuration.tls.caPEM = TestCertificates.caPEM
        configuration.tls.clientCertificateFile = certificate
        configuration.tls.clientKeyFile = key
        configuration.httpVersion = version
        configuration.requestTimeout = .seconds(10)
        return try NetworkClient(configuration: configuration, registry: registry)
    }

    @Test(
        "the configured client certificate is presented, over HTTP/1.1 and HTTP/2",
        arguments: ["curl", "ahc"], [HTTPVersionPreference.http1_1, .http2])
    func presented(_ transport: String, _ version: HTTPVersionPreference) async throws {
        guard Self.registry.names.contains(transport) else { return }  // ahc needs the package trait
        try await Self.withClientFiles { files in
            try await withServer(mode: .mutualTLS) { server in
                let client = try Self.client(
                    transport, server: server, version: version, certificate: files.certificate, key: files.key)
                let response = try await client.response(for: RawEndpoint(path: "bytes/10"))
                #expect(response.value.count == 10)
                #expect(response.metrics.httpVersion == (version == .http2 ? "2" : "1.1"))
                await client.shutdown()
            }
        }
    }

    @Test("without a client certificate the call fails as a TLS failure and reaches no route", arguments: ["curl", "ahc"])
    func missing(_ transport: String) async throws {
        guard Self.registry.names.contains(transport) else { return }  // ahc needs the package trait
        try await withServer(mode: .mutualTLS) { server in
            let client = try Self.client(transport, server: server, version: .http1_1, certificate: nil, key: nil)
            let error = await expectNetworkError(.tlsFailure) { try await client.send(RawEndpoint(path: "bytes/10")) }
            #expect(error?.message.contains("certificate") == true || error?.message.contains("CERTIFICATE") == true)
            #expect(server.requestCount == 0)
            await client.shutdown()
        }
    }

    @Test("curl: an encrypted key opens with its password, and a wrong password fails as a TLS failure")
    func encryptedKey() async throws {
        try await Self.withClientFiles { files in
            try await withServer(mode: .mutualTLS) { server in
                for (password, accepted) in [(TestCertificates.clientKeyPassword, true), ("not-the-password", false)] {
                    var settings = CurlTransport.Configuration()
                    settings.tls.caPEM = TestCertificates.caPEM
                    settings.tls.clientCertificateFile = files.certificate
                    settings.tls.clientKeyFile = files.encryptedKey
                    settings.tls.clientKeyPassword = password
                    let transport = try CurlTransport(configuration: settings)
                    let client = try NetworkClient(
                        configuration: ClientConfiguration(baseURL: server.baseURL, transport: "curl"), transport: transport)
                    if accepted {
                        #expect(try await client.send(RawEndpoint(path: "bytes/10")).count == 10)
                    } else {
                        await expectNetworkError(.tlsFailure) { try await client.send(RawEndpoint(path: "bytes/10")) }
                    }
                    await client.shutdown()
                }
            }
        }
    }
}
