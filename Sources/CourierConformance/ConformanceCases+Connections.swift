import Courier
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension ConformanceCases {
    /// HTTP/2 over TLS with the test CA trusted through the client configuration: calls share
    /// one connection and report version 2. A transport that cannot trust a private CA refuses the
    /// configuration at start-up, naming `tls.caPEM`.
    public static func http2OverTLS(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: .tls) { server in
            let configure: (inout ClientConfiguration) -> Void = {
                $0.tls.caPEM = TestCertificates.caPEM
                $0.httpVersion = .http2
            }
            guard transport.privateCA == .trusted else {
                do {
                    _ = try transport.makeClient(server, configure: configure)
                    Issue.record("\(transport.name) accepted a private CA it cannot use")
                } catch let error as ConfigurationError {
                    #expect(error.key == ConfigurationKey.tlsCAPEM.name)
                }
                return
            }
            let client = try transport.makeClient(server, configure: configure)
            for index in 0..<3 {
                let response = try await client.response(for: EchoEndpoint(query: [QueryItem("call", "\(index)")]))
                #expect(response.metrics.httpVersion == "2", "call \(index): \(response.metrics.httpVersion ?? "none")")
                #expect(response.value.query == [["call", "\(index)"]])
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask { _ = try await client.send(RawEndpoint(path: "delay/50", query: [QueryItem("n", "\(index)")])) }
                }
                try await group.waitForAll()
            }
            #expect(server.connectionsOpened == 1, "\(server.connectionsOpened) connections for 11 calls over HTTP/2")
            await client.shutdown()
        }
    }

    /// A server that stops sending mid-body for longer than the stall limit (2 s) fails the call
    /// as timed out while receiving, long before the deadline.
    public static func stall(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server) {
                $0.stallTimeout = .seconds(2)
                $0.requestTimeout = .seconds(30)
            }
            let started = ContinuousClock.now
            let error = await expectNetworkError(.timedOut) {
                try await client.send(RawEndpoint(path: "stream/4", query: [QueryItem("size", "10"), QueryItem("delayMs", "8000")]))
            }
            #expect(error?.phase == .receiving || error?.phase == .awaitingResponse, "\(String(describing: error))")
            #expect(started.duration(to: .now) < .seconds(7), "the stall limit, not the server, ended the call")
            await client.shutdown()
        }
    }

    /// A slow but steady body is not a stall: bytes every 0.3 s for about 6 s pass a 3 s limit
    /// (ten times the gap, room for a loaded machine; the body still outlasts the limit twice).
    public static func steadyBodyIsNotAStall(_ transport: ConformanceTransport) async throws {
        try await withServer { server in
            let client = try transport.makeClient(server) {
                $0.stallTimeout = .seconds(3)
                $0.requestTimeout = .seconds(30)
            }
            let body = try await client.send(
                RawEndpoint(path: "stream/20", query: [QueryItem("size", "10"), QueryItem("delayMs", "300")]))
            #expect(body.count == 200)
            await client.shutdown()
        }
    }

    /// A host that never accepts the connection fails as timed out while connecting, at the
    /// connect timeout (or, where the transport declares it, the stall limit) rather than the
    /// deadline.
    public static func connectTimeout(_ transport: ConformanceTransport) async throws {
        let blackhole = try FullBacklogListener()
        defer { blackhole.close() }
        let client = try transport.makeClient(baseURL: "http://127.0.0.1:\(blackhole.port)") {
            $0.connectTimeout = .milliseconds(500)
            if transport.connectTimeout == .boundedByStallLimit { $0.stallTimeout = .seconds(1) }
            $0.requestTimeout = .seconds(20)
        }
        let started = ContinuousClock.now
        let error = await expectNetworkError(.timedOut) { try await client.send(RawEndpoint(path: "x")) }
        let phase: NetworkError.Phase = transport.connectTimeout == .separate ? .connect : .awaitingResponse
        #expect(error?.phase == phase, "\(String(describing: error))")
        #expect(started.duration(to: .now) < .seconds(10), "the connect timeout, not the deadline, ended the call")
        await client.shutdown()
    }

    /// A download is a long transfer: one whose body keeps coming (a piece every 0.3 s) runs past
    /// a 2 s request timeout, which bounds only its head; one whose server stops sending fails as
    /// timed out at the 2 s stall limit, while receiving. `COURIER_LONG_TRANSFER_SECONDS` (6 by
    /// default) sets how long the first runs: 70 for the issue's real run.
    public static func longTransferOutlivesTheRequestTimeout(_ transport: ConformanceTransport) async throws {
        let seconds = ProcessInfo.processInfo.environment["COURIER_LONG_TRANSFER_SECONDS"].flatMap(Int.init) ?? 6
        let pieces = max(1, seconds * 1000 / 300)
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server) {
                $0.stallTimeout = .seconds(2)
                $0.requestTimeout = .seconds(2)
            }
            let directory = FileManager.default.temporaryDirectory
            let target = directory.appendingPathComponent("courier-long-\(UUID().uuidString).bin")
            defer { try? FileManager.default.removeItem(at: target) }
            let started = ContinuousClock.now
            let steady = RawEndpoint(path: "stream/\(pieces)", query: [QueryItem("size", "10"), QueryItem("delayMs", "300")])
            let result = try await client.download(steady, to: target)
            #expect(result.bytes == Int64(pieces * 10) && result.resumed == 0 && result.restarted == 0, "\(result)")
            #expect(started.duration(to: .now) > .seconds(2), "the body outlived the request timeout")
            var options = DownloadOptions()
            options.resumes = false
            let stalled = RawEndpoint(path: "stream/4", query: [QueryItem("size", "10"), QueryItem("delayMs", "8000")])
            let stallStart = ContinuousClock.now
            let error = await expectNetworkError(.timedOut) { _ = try await client.download(stalled, to: target, options: options) }
            #expect(error?.phase == .receiving, "\(String(describing: error))")
            let stallTook = stallStart.duration(to: .now)
            #expect(stallTook < .seconds(7), "the stall limit, not the server, ended the download")
            let steadyTook = started.duration(to: stallStart)
            print("\(transport.name) long transfer: \(pieces) pieces in \(steadyTook), a 2 s stall failed after \(stallTook)")
            await client.shutdown()
        }
    }

    /// An IPv6 literal host works on every transport: `[::ffff:127.0.0.1]` (the loopback server
    /// listens on 127.0.0.1 only; an IPv4-mapped address reaches it over an IPv6 socket), with
    /// `Host` naming the literal.
    public static func ipv6Literal(_ transport: ConformanceTransport) async throws {
        try await withServer(mode: .http1) { server in
            let client = try transport.makeClient(baseURL: "http://[::ffff:127.0.0.1]:\(server.port)")
            let echo = try await client.send(EchoEndpoint())
            #expect(echo.path == "/echo")
            #expect(echo.header("host")?.hasPrefix("[::ffff:127.0.0.1]") == true, "\(echo.headers)")
            await client.shutdown()
        }
    }
}
