import ArgumentParser
import Foundation
import Testing

@testable import CourierBenchKit

@Suite("courier-bench count: options, perf's output and the per-call arithmetic")
struct CountCommandTests {
    @Test("defaults per transport, and the run each measured process gets")
    func plans() throws {
        let network = try CountCommand.parse([]).plan()
        #expect(network == .init(transport: "curl-engine", url: nil, concurrency: 16, short: 5000, long: 15000))
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
