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
            (["-X", "PUT"], "-X, --data and --data-file are for --url endpoints"),
            (["--data", "x"], "-X, --data and --data-file are for --url endpoints"),
            (["--url", "http://127.0.0.1:9/", "--data", "x", "--scenarios", "post"], "give --scenarios or -X/--data/--data-file"),
            (["--url", "http://127.0.0.1:9/", "--scenarios", "custom"], "--scenarios custom is made by -X"),
            (["--scenarios", "custom"], "--scenarios custom needs --url"),
            (["--url", "http://127.0.0.1:9/", "--data", "x", "--data-file", "/etc/hostname"], "give --data or --data-file, not both"),
            (["--url", "http://127.0.0.1:9/", "--data-file", "/no/such/body"], "--data-file /no/such/body: no readable file there"),
            (["--url", "http://127.0.0.1:9/", "--data-file", "/tmp"], "not a regular file"),
            (["--url", "http://127.0.0.1:9/", "-X", "GET", "--data", "x"], "-X GET sends no body"),
            (["--url", "http://127.0.0.1:9/", "-X", "HEAD", "--data", "x"], "-X HEAD sends no body"),
            (["--url", "http://127.0.0.1:9/", "-X", "PU T"], "is not a method name"),
            (["--url", "http://127.0.0.1:9/", "-H", "X-Evil: a\r\nInjected: 1"], "control character"),
            (["--url", "http://127.0.0.1:9/", "-H", "X-Nul: a\u{0}b"], "control character"),
            (["--url", "http://127.0.0.1:9/", "-H", "Bad Name: 1"], "is not a header name"),
            (["--url", "http://127.0.0.1:9/", "-H", "Host: elsewhere"], "the transport sets this header itself"),
            (["--url", "http://127.0.0.1:9/", "-H", "content-length: 5"], "the transport sets this header itself"),
            (["--timeout", "0"], "--timeout must be more than 0"),
            (["--timeout", "601"], "at most 600 seconds"),
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
        #expect(!plan.streams)
        #expect(try RunCommand.parse(["--stream", "--scenarios", "large"]).plan().streams)
    }

    @Test("--full runs every scenario at concurrency 1, 16 and 64 over HTTP/1.1 and HTTP/2")
    func full() throws {
        let plan = try RunCommand.parse(["--full"]).plan()
        #expect(plan.configurations.count == 6 * 3 * 2)
        #expect(Set(plan.configurations.map(\.scenario)) == [.small, .medium, .large, .post, .cached, .cachedDisk])
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

    @Test("--url with -X, -H, --data-file and --timeout: one custom scenario; every cell's request carries them")
    func customRequest() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-body-\(UUID().uuidString)").path
        try Data(repeating: UInt8(ascii: "b"), count: 3000).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let plan = try RunCommand.parse([
            "--url", "http://127.0.0.1:8080/orders", "-X", "put", "-H", "X-Team: courier", "-H", "content-type: application/x-order",
            "--data-file", file, "--timeout", "5",
        ]).plan()
        #expect(plan.configurations.map(\.scenario) == [.custom])
        let request = Scenario.custom.request(from: plan.request)
        #expect(request.method == "PUT")
        #expect(request.headers == [.init(name: "X-Team", value: "courier")])
        #expect(request.contentType == "application/x-order")
        #expect(request.headerLines == ["X-Team: courier", "Content-Type: application/x-order"])
        #expect(request.bodyCount == 3000)
        #expect(request.timeoutSeconds == 5)

        // The named scenarios keep their own method and body, and take the caller's headers and deadline.
        let named = try RunCommand.parse(["--url", "http://127.0.0.1:8080/", "--scenarios", "get,post", "-H", "X-A: 1", "--timeout", "7"])
            .plan()
        let get = Scenario.get.request(from: named.request)
        let post = Scenario.post.request(from: named.request)
        #expect(get.method == "GET" && get.body == nil && get.headerLines == ["X-A: 1"] && get.timeoutSeconds == 7)
        #expect(post.method == "POST" && post.body == Scenario.postBody)
        #expect(post.headerLines == ["X-A: 1", "Content-Type: application/json"])
        #expect(try RunCommand.parse([]).plan().request == BenchRequest())
    }

    @Test("a wrk script escapes every byte, so a quote or newline in a value cannot end its string")
    func wrkScript() {
        let request = BenchRequest(
            method: "PUT", headers: [.init(name: "X-Q", value: "a\"b")], body: Array("x'\n]]".utf8), contentType: "text/plain")
        let script = LimitTools.wrkScript(request)
        #expect(script.hasPrefix("wrk.method = \"\\80\\85\\84\"\n"))
        #expect(!script.contains("'") && !script.contains("]]"))
        #expect(script.components(separatedBy: "\n").count == 5)  // method, body, two headers, and the final newline
    }

    @Test(
        "bad probe options fail with a message naming the option",
        arguments: [
            (["example.com"], "URL must be an absolute http:// or https:// URL"),
            (["http://127.0.0.1:9/", "--transport", "mock"], "--transport: unknown transport \"mock\""),
            (["http://127.0.0.1:9/", "-H", "no colon"], "-H takes 'Name: value'"),
            (["http://127.0.0.1:9/", "-H", ": value"], "is not a header name"),
            (["http://127.0.0.1:9/", "-H", "X-Evil: a\nb"], "control character"),
            (["http://127.0.0.1:9/", "-X", "GET", "--data", "x"], "-X GET sends no body"),
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
        #expect(probe.request.method == "POST")
        #expect(probe.request.headers.map(\.name) == ["X-One", "X-Two"])
        #expect(probe.request.headers.map(\.value) == ["1", "two words"])
        #expect(probe.request.body == Array("{}".utf8))
        #expect(probe.request.contentType == "application/octet-stream")
        #expect(probe.request.timeoutSeconds == 30)
        #expect(probe.http == .http1)
        #expect(try ProbeCommand.parse(["http://127.0.0.1:9/"]).probe().transports == [.curl, .urlsession, .ahc])
    }
}
