import ArgumentParser
import CourierTestServer
import Foundation
import Testing

@testable import CourierBenchKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite("courier-bench count: options, perf's output and the per-call arithmetic")
struct CountCommandTests {
    @Test("defaults per transport, and the run each measured process gets")
    func plans() throws {
        let network = try CountCommand.parse([]).plan()
        #expect(network == .init(transport: "curl-engine", url: nil, server: .oneWrite, concurrency: 16, short: 5000, long: 15000))
        let split = try CountCommand.parse(["--server", "split"]).plan()
        #expect(split.server == .split && split.server?.path == "/shaped/100?splitMs=2")
        #expect(try CountCommand.parse(["--server", "many-headers"]).plan().server == .manyHeaders)
        let mock = try CountCommand.parse(["--transport", "mock", "--url", "http://127.0.0.1:9/"]).plan()
        #expect(mock == .init(transport: "mock", url: nil, concurrency: 64, short: 20000, long: 70000), "the mock needs no server")
        let custom = try CountCommand.parse(["--transport", "ahc", "--calls", "100,300", "--concurrency", "4"]).plan()
        #expect(custom.short == 100 && custom.long == 300 && custom.concurrency == 4)
        let arguments = CountCommand.runArguments(network, url: "http://127.0.0.1:8080/bytes/100", calls: 5000)
        #expect(
            arguments == [
                "run", "--transports", "curl-engine", "--concurrency", "16", "--repeat", "1", "--requests", "5000", "--warmup", "0",
                "--duration", "60", "--no-limit", "--url", "http://127.0.0.1:8080/bytes/100",
            ])
        // The run command accepts what count hands it.
        _ = try RunCommand.parse(Array(arguments.dropFirst())).plan()
        _ = try RunCommand.parse(Array(CountCommand.runArguments(mock, url: nil, calls: 20000).dropFirst())).plan()
    }

    @Test(
        "bad options fail before anything runs, naming the option",
        arguments: [
            (["--transport", "reference"], "--transport must be one of"),
            (["--concurrency", "0"], "--concurrency must be 1 to 1000"),
            (["--calls", "500"], "--calls must be 'short,long'"),
            (["--calls", "500,100"], "--calls must be 'short,long'"),
            (["--calls", "0,100"], "--calls must be 'short,long'"),
            (["--calls", "a,b"], "--calls must be 'short,long'"),
            (["--url", "ftp://127.0.0.1/"], "--url must be an http or https URL"),
            (["--server", "nginx"], "--server must be one of one-write, split, many-headers"),
            (["--server", "split", "--url", "http://127.0.0.1:9/"], "--server shapes the loopback server"),
            (["--server", "split", "--transport", "mock"], "--server shapes the loopback server"),
        ])
    func badOptions(arguments: [String], message: String) {
        do {
            _ = try CountCommand.parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(CountCommand.message(for: error).contains(message), "\(CountCommand.message(for: error))")
        }
    }

    @Test("perf stat's CSV: counts by function, other lines skipped; per call from two runs")
    func parsing() {
        let short = """
            # started on Fri Nov 27 17:00:00 2026

            1000000,,probe_libswiftCore:swift_retain,5000,100.00,,
            1200000,,probe_libswiftCore:swift_release,5000,100.00,,
            400000,,probe_libc:malloc,5000,100.00,,
            90000,,probe_libswift_Concurrency:swift_task_switch,5000,100.00,,
            300000,,probe_libc:pthread_mutex_lock,5000,100.00,,
            <not counted>,,probe_libc:free,0,0.00,,
            """
        let long = """
            3000000,,probe_libswiftCore:swift_retain,5000,100.00,,
            3700000,,probe_libswiftCore:swift_release,5000,100.00,,
            800000,,probe_libc:malloc,5000,100.00,,
            180000,,probe_libswift_Concurrency:swift_task_switch,5000,100.00,,
            610000,,probe_libc:pthread_mutex_lock,5000,100.00,,
            """
        let a = UprobeCounts.parse(short)
        let b = UprobeCounts.parse(long)
        #expect(a.count == 5 && b.count == 5)
        let perCall = UprobeCounts.perCall(short: a, long: b, calls: 10000)
        #expect(perCall["swift_retain"] == 200 && perCall["swift_release"] == 250 && perCall["malloc"] == 40)
        #expect(perCall["swift_task_switch"] == 9 && perCall["pthread_mutex_lock"] == 31)
        #expect(UprobeCounts.perCall(short: a, long: b, calls: 0).isEmpty)
    }

    @Test("a library's path from /proc/PID/maps, by its exact file name")
    func libraries() {
        let maps = """
            7f0000000000-7f0000001000 r--p 00000000 08:01 123 /usr/lib/swift/linux/libswiftCore.so
            7f0000002000-7f0000003000 r--p 00000000 08:01 124 /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000004000-7f0000005000 rw-p 00000000 00:00 0 [heap]
            """
        #expect(UprobeCounts.library("libswiftCore.so", in: maps) == "/usr/lib/swift/linux/libswiftCore.so")
        #expect(UprobeCounts.library("libc.so.6", in: maps) == "/usr/lib/x86_64-linux-gnu/libc.so.6")
        #expect(UprobeCounts.library("libswift_Concurrency.so", in: maps) == nil)
    }
}

/// The loopback server's answer shapes `count --server` names, read off a raw socket.
@Suite("courier-bench count: the loopback server's shapes")
struct ServerShapeTests {
    /// Sends `GET path` to `port` and returns what the first reads bring, until the head is whole.
    static func head(port: Int, path: String) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { _ = close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        try #require(setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        try #require(request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) } == request.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            try #require(count > 0, "the server sent no head")
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    @Test("split: the head alone, the body later; many-headers: eight more lines; one-write: head and body together")
    func shapes() async throws {
        let server = try await TestServer.start(mode: .http1)
        // The body 10 s after the head: nothing but the head can have arrived when it is whole.
        let split = try Self.head(port: server.port, path: "/shaped/100?splitMs=10000")
        #expect(split.hasSuffix("\r\n\r\n") && split.lowercased().contains("content-length: 100"), "\(split)")
        let many = try Self.head(port: server.port, path: CountCommand.ServerShape.manyHeaders.path)
        #expect(many.contains("X-Filler-7:") && !many.contains("X-Filler-8:"), "\(many)")
        #expect(CountCommand.ServerShape.oneWrite.path == Scenario.small.path)
        await server.shutdown()
    }
}
