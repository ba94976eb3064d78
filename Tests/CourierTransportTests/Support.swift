import Courier
import CourierTestServer

/// Runs `body` with a fresh loopback server speaking `mode` (HTTP/1.1 by default), and shuts it down afterwards.
func withServer<T>(mode: TestServer.Mode = .http1, _ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start(mode: mode)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
