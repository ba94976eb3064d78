import ArgumentParser
import Foundation
import HTTPTypes
import Testing

@testable import CourierBenchKit

@Suite("courier-bench: arguments are checked before anything runs")
struct ArgumentTests {
    @Test(
        "bad run options fail with a message naming the option",
        arguments: [
            (["--url", "not a url"], "--url must be an absolute http:// or https:// URL"),
            (["--url", "ftp://example.com/"], "--url must be an absolute http:// or https:// URL"),
            (["--transports", "curl,carrier-pigeon"], "--transports: unknown value \"carrier-pigeon\""),
            (["--duration", "0"], "--duration must be more than 0"),
            (["--duration=-3"], "--duration must be more than 0"),
            (["--concurrency", "0"], "--concurrency takes numbers from 1 to 1000"),
            (["--concurrency", "16,lots"], "--concurrency takes numbers from 1 to 1000"),
            (["--repeat", "0"], "--repeat must be 1 to 20"),
            (["--requests", "0"], "--requests must be 1 to 100000000"),
            (["--warmup=-1"], "--warmup must be 0 to 600 seconds"),
            (["--http", "3"], "--http: unknown value \"3\""),
            (["--scenarios", "get"], "--scenarios get needs --url"),
            (["--url", "http://127.0.0.1:9/", "--scenarios", "large"], "with --url, --scenarios takes get or post"),
            (["--cacert", "/etc/hostname"], "--cacert is for --url endpoints"),
            (["--url", "https://127.0.0.1:9/", "--cacert", "/no/such/ca.pem"], "no readable file there"),
        ])
    func badRunOptions(arguments: [String], message: String) {
        #expect(throws: (any Error).self) { try RunCommand.parse(arguments) }
        do {
            _ = try RunCommand.parse(arguments)
        } catch {
            #expect(RunCommand.message(for: error).contains(message), "\(RunCommand.message(for: error))")
        }
    }

    @Test("no options: the default comparison of every client in three cells")
    func defaults() throws {
        let plan = try RunCommand.parse([]).plan()
        #expect(plan.transports == [.curl, .curlEngine, .urlsession, .ahc, .mock, .reference])
        #expect(plan.configurations == RunPlan.defaultConfigurations)
        #expect(plan.durationSeconds == 2)
        #expect(plan.repeats == 3)
        #expect(plan.warmupSeconds == 0.5)
        #expect(plan.maxRequests == nil)
        #expect(!plan.pin)
        #expect(plan.runsLimitTools)
    }

    @Test("--full runs every scenario at concurrency 1, 16 and 64 over HTTP/1.1 and HTTP/2")
    func full() throws {
        let plan = try RunCommand.parse(["--full"]).plan()
        #expect(plan.configurations.count == 4 * 3 * 2)
        #expect(Set(plan.configurations.map(\.scenario)) == [.small, .medium, .large, .post])
        #expect(Set(plan.configurations.map(\.concurrency)) == [1, 16, 64])
        #expect(Set(plan.configurations.map(\.http)) == [.http1, .http2])
    }

    @Test("lists are a cross product; repeated items count once")
    func lists() throws {
        let plan = try RunCommand.parse([
            "--transports", "curl, mock,curl", "--scenarios", "post", "--concurrency", "1,16", "--http", "h2c", "--repeat", "5",
        ]).plan()
        #expect(plan.transports == [.curl, .mock])
        #expect(
            plan.configurations == [
                BenchConfiguration(scenario: .post, concurrency: 1, http: .h2c),
                BenchConfiguration(scenario: .post, concurrency: 16, http: .h2c),
            ])
        #expect(plan.repeats == 5)
    }

    @Test("--requests alone is still bounded in time")
    func requestsAreBounded() throws {
        let plan = try RunCommand.parse(["--requests", "500"]).plan()
        #expect(plan.maxRequests == 500)
        #expect(plan.durationSeconds == RunPlan.requestsOnlyDurationSeconds)
        let both = try RunCommand.parse(["--requests", "500", "--duration", "3"]).plan()
        #expect(both.durationSeconds == 3)
    }

    @Test("--url: GET at concurrency 16, over HTTP/1.1 and HTTP/2 for https")
    func userEndpoint() throws {
        let secure = try RunCommand.parse(["--url", "https://127.0.0.1:8443/health"]).plan()
        #expect(secure.url == "https://127.0.0.1:8443/health")
        #expect(secure.configurations.map(\.scenario) == [.get, .get])
        #expect(secure.configurations.map(\.http) == [.http1, .http2])
        #expect(secure.configurations.allSatisfy { $0.concurrency == 16 })
        let plain = try RunCommand.parse(["--url", "http://127.0.0.1:8080/", "--scenarios", "get,post"]).plan()
        #expect(plain.configurations.map(\.scenario) == [.get, .post])
        #expect(plain.configurations.allSatisfy { $0.http == .http1 })
    }

    @Test(
        "bad probe options fail with a message naming the option",
        arguments: [
            (["example.com"], "URL must be an absolute http:// or https:// URL"),
            (["http://127.0.0.1:9/", "--transport", "mock"], "--transport: unknown transport \"mock\""),
            (["http://127.0.0.1:9/", "-H", "no colon"], "-H takes 'Name: value'"),
            (["http://127.0.0.1:9/", "-H", ": value"], "the header name is empty"),
            (["http://127.0.0.1:9/", "--http", "h2c"], "--http takes 1.1 or 2"),
            (["http://127.0.0.1:9/", "--timeout", "0"], "--timeout must be more than 0"),
            (["http://127.0.0.1:9/", "-X", "GE T"], "is not a method name"),
        ])
    func badProbeOptions(arguments: [String], message: String) {
        do {
            _ = try ProbeCommand.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(ProbeCommand.message(for: error).contains(message), "\(ProbeCommand.message(for: error))")
        }
    }

    @Test("a probe's options become the request")
    func probeOptions() throws {
        let probe = try ProbeCommand.parse([
            "https://127.0.0.1:9/x", "--transport", "curl", "-H", "X-One: 1", "-H", "X-Two:  two words ", "--data", "{}", "--http", "1.1",
        ]).probe()
        #expect(probe.transports == [.curl])
        #expect(probe.method == .post)
        #expect(probe.headers.map(\.0) == ["X-One", "X-Two"])
        #expect(probe.headers.map(\.1) == ["1", "two words"])
        #expect(probe.body == Data("{}".utf8))
        #expect(probe.http == .http1)
        #expect(try ProbeCommand.parse(["http://127.0.0.1:9/"]).probe().transports == [.curl, .urlsession, .ahc])
    }
}
