import Courier
import CourierTestServer

/// Runs `body` with a fresh loopback server, and shuts it down afterwards.
func withServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
