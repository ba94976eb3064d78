import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Where calls connect, when the configuration says otherwise than the URL's host: a Unix socket,
/// or another address. The request still names its host, and TLS still verifies it (issue 42).
extension ConformanceCases {
    /// A transport that cannot honour `key` refuses a client that sets it, naming the key.
    private static func expectRefused(
        _ transport: ConformanceTransport, key: ConfigurationKey, baseURL: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ configure: (inout ClientConfiguration) -> Void = { _ in }
    ) async {
        do {
            let client = try transport.makeClient(baseURL: baseURL, configure: configure)
            Issue.record("\(transport.name) took \(key.name)", sourceLocation: sourceLocation)
            await client.shutdown()
        } catch let error as ConfigurationError {
            #expect(error.key == key.name, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    /// Runs `body` with a Unix socket relayed to `server`, and removes it afterwards.
    private static func withRelay(to server: TestServer, _ body: (UnixSocketRelay) async throws -> Void) async throws {
        let relay = try await UnixSocketRelay.start(to: server.port)
        do {
            try await body(relay)
        } catch {
            await relay.shutdown()
            throw error
        }
        await relay.shutdown()
    }

    /// `http+unix://<socket>/…` as a base URL: every call goes through the socket (the server never
    /// sees a TCP connection of the client's own), and `Host` is `localhost`. Over TLS, curl
    /// verifies the certificate for `localhost`; AsyncHTTPClient refuses https over a socket. A
    /// socket path with nothing there fails as `connect_failure` in phase `connect`.
    public static func unixSocket(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            try await withRelay(to: server) { relay in
                let socket = relay.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? relay.path
                let scheme = server.mode.usesTLS ? "https" : "http"
                let baseURL = "\(scheme)+unix://\(socket)/"
                switch transport.connectionOverriding {
                case .refused:
                    await expectRefused(transport, key: .connectionsUnixSocket, baseURL: baseURL)
                    return
                case .plainHTTPOnly where server.mode.usesTLS:
                    let client = try transport.makeClient(baseURL: baseURL) { ConformanceTransport.reach(server.mode, with: &$0) }
                    await expectNetworkError(.unsupported) { try await client.send(EchoEndpoint()) }
                    #expect(relay.accepted == 0)
                    await client.shutdown()
                    return
                default:
                    break
                }
                let client = try transport.makeClient(baseURL: baseURL) { ConformanceTransport.reach(server.mode, with: &$0) }
                for _ in 0..<2 {
                    let echo = try await client.send(EchoEndpoint(method: .post, body: .text("via socket")))
                    #expect(echo.body == "via socket" && echo.header("host")?.hasPrefix("localhost") == true, "\(echo.headers)")
                }
                #expect(relay.accepted >= 1 && server.requestCount == 2, "accepted \(relay.accepted), requests \(server.requestCount)")
                await client.shutdown()
                // A socket that is not there fails as a refused port does: connect_failure.
                let missing = (relay.path + ".missing").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? relay.path
                let nowhere = try transport.makeClient(baseURL: "\(scheme)+unix://\(missing)/") {
                    ConformanceTransport.reach(server.mode, with: &$0)
                }
                let error = await expectNetworkError(.connectFailure) { try await nowhere.send(EchoEndpoint()) }
                #expect(error?.phase == .connect, "\(String(describing: error))")
                await nowhere.shutdown()
            }
        }
    }

    /// A host name mapped to 127.0.0.1 reaches the loopback server with `Host` still the name; over
    /// TLS the certificate is checked for the name, so a name the certificate does not carry
    /// fails as `tls_failure`, and the one it carries (`localhost`) succeeds. A transport that
    /// honours overrides for plain http only fails the https call as `unsupported`, sending nothing.
    public static func addressOverride(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let name = "api.courier.test"
            let scheme = server.mode.usesTLS ? "https" : "http"
            let configure: (inout ClientConfiguration) -> Void = { configuration in
                ConformanceTransport.reach(server.mode, with: &configuration)
                configuration.connectionOverrides.addresses = [name: "127.0.0.1", "localhost": "127.0.0.1"]
            }
            if transport.connectionOverriding == .refused {
                await expectRefused(transport, key: .connectionsAddresses, baseURL: "\(scheme)://\(name):\(server.port)", configure)
                return
            }
            let client = try transport.makeClient(baseURL: "\(scheme)://\(name):\(server.port)", configure: configure)
            if server.mode.usesTLS, transport.connectionOverriding == .plainHTTPOnly {
                await expectNetworkError(.unsupported) { try await client.send(EchoEndpoint()) }
                #expect(server.requestCount == 0)
            } else if server.mode.usesTLS {
                await expectNetworkError(.tlsFailure) { try await client.send(EchoEndpoint()) }
                let local = try transport.makeClient(baseURL: "https://localhost:\(server.port)", configure: configure)
                #expect(try await local.send(EchoEndpoint()).header("host")?.hasPrefix("localhost") == true)
                await local.shutdown()
            } else {
                let echo = try await client.send(EchoEndpoint())
                #expect(echo.header("host") == "\(name):\(server.port)", "\(echo.headers)")
            }
            await client.shutdown()
        }
    }
}
