import CourierTestServer
import Foundation

/// The loopback servers a plan needs: HTTP/1.1, HTTP/2 over TLS, cleartext HTTP/2; or none for `--url`.
struct EmbeddedServers: Sendable {
    private var servers: [HTTPChoice: TestServer] = [:]
    /// The embedded server's CA, written to a file for the clients.
    private(set) var caFile: String?

    /// Starts one server per HTTP version the plan uses (none with `--url`).
    static func start(for plan: RunPlan, caDirectory: String) async throws -> EmbeddedServers {
        var started = EmbeddedServers()
        guard plan.url == nil else { return started }
        do {
            for http in Set(plan.configurations.map(\.http)).sorted() {
                let mode: TestServer.Mode = http == .http1 ? .http1 : http == .http2 ? .tls : .h2c
                started.servers[http] = try await TestServer.start(mode: mode)
            }
            if started.servers[.http2] != nil {
                let file = "\(caDirectory)/ca.pem"
                guard FileManager.default.createFile(atPath: file, contents: Data(TestCertificates.caPEM.utf8)) else {
                    throw BenchError.file("could not write \(file)")
                }
                started.caFile = file
            }
        } catch {
            await started.shutdown()
            throw error
        }
        return started
    }

    /// The URL the clients request for a cell.
    func url(for cell: BenchConfiguration, plan: RunPlan) -> String {
        if let url = plan.url { return url }
        guard let server = servers[cell.http] else { return "http://127.0.0.1:1/" }
        return server.baseURL + cell.scenario.path
    }

    /// The URL for wrk and h2load: the same server by address (they do not verify certificates, and
    /// `localhost` may resolve to `::1` first, where nothing listens).
    func limitURL(for cell: BenchConfiguration, plan: RunPlan) -> String {
        if let url = plan.url { return url }
        guard let server = servers[cell.http] else { return "http://127.0.0.1:1/" }
        let scheme = server.mode.usesTLS ? "https" : "http"
        return "\(scheme)://127.0.0.1:\(server.port)\(cell.scenario.path)"
    }

    /// Stops every server.
    func shutdown() async {
        for server in servers.values { await server.shutdown() }
    }
}
