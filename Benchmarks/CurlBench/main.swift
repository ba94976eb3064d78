// courier-curl-bench: requests per second through `NetworkClient` over one transport, to compare
// side by side with the C reference (Benchmarks/CurlReference) on the same server and settings.
//
//   courier-curl-bench URL [--transport curl|urlsession] [--concurrency 64] [--seconds 5]
//                          [--http 1.1|2|h2c] [--ca FILE]
//
// Benchmarks/curl-comparison.sh runs it and the C program against a local nginx and prints ratios.
import Courier
import CourierCurl
import CourierURLSession
import Foundation

struct Options {
    var url = ""
    var transport = "curl"
    var concurrency = 64
    var seconds = 5.0
    var http = "1.1"
    var caFile: String?

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var index = 0
        func value() -> String? {
            index += 1
            return index < arguments.count ? arguments[index] : nil
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--transport": options.transport = value() ?? ""
            case "--concurrency": options.concurrency = Int(value() ?? "") ?? -1
            case "--seconds": options.seconds = Double(value() ?? "") ?? -1
            case "--http": options.http = value() ?? ""
            case "--ca": options.caFile = value()
            default: options.url = arguments[index]
            }
            index += 1
        }
        guard !options.url.isEmpty, (1...10_000).contains(options.concurrency), options.seconds > 0, options.seconds <= 600,
            ["curl", "urlsession"].contains(options.transport), ["1.1", "2", "h2c"].contains(options.http)
        else { return nil }
        return options
    }
}

struct Get: Endpoint {
    typealias Output = Data
    var path: String { "" }
}

guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
    FileHandle.standardError.write(
        Data(
            "usage: courier-curl-bench URL [--transport curl|urlsession] [--concurrency N] [--seconds S] [--http 1.1|2|h2c] [--ca FILE]\n"
                .utf8))
    exit(2)
}

let transport: any Transport
switch options.transport {
case "curl":
    var settings = CurlTransport.Configuration()
    settings.httpVersion = options.http == "1.1" ? .http1_1 : options.http == "2" ? .http2 : .http2PriorKnowledge
    settings.tls.caFile = options.caFile
    transport = try CurlTransport(configuration: settings)
default:
    var settings = URLSessionTransport.Configuration()
    settings.maxConnectionsPerHost = options.concurrency
    transport = URLSessionTransport(configuration: settings)
}
var configuration = ClientConfiguration(baseURL: options.url, transport: options.transport)
configuration.requestTimeout = .seconds(30)
let client = try NetworkClient(configuration: configuration, transport: transport)

// Warm up: open the connections before measuring.
_ = try await client.send(Get())

let clock = ContinuousClock()
let start = clock.now
let end = start.advanced(by: .milliseconds(Int(options.seconds * 1000)))
let (completed, failed) = await withTaskGroup(of: (Int, Int).self) { group in
    for _ in 0..<options.concurrency {
        group.addTask {
            var completed = 0
            var failed = 0
            while clock.now < end {
                do {
                    _ = try await client.send(Get())
                    completed += 1
                } catch {
                    failed += 1
                    if failed == 1 { FileHandle.standardError.write(Data("first failure: \(error)\n".utf8)) }
                }
            }
            return (completed, failed)
        }
    }
    var totals = (0, 0)
    for await (completed, failed) in group {
        totals.0 += completed
        totals.1 += failed
    }
    return totals
}
let elapsed = start.duration(to: clock.now)
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(
    "courier-\(options.transport) \(options.http) requests=\(completed) failed=\(failed) seconds=\(String(format: "%.2f", seconds)) requests_per_second=\(Int(Double(completed) / seconds))"
)
await client.shutdown()
exit(failed > 0 ? 1 : 0)
