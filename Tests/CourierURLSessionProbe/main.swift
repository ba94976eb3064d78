// Makes one GET through URLSessionTransport and prints how it ended. URLSessionCrashTests runs it
// in a process of its own against FaultServer's faults that crash FoundationNetworking: a crash
// here must not take the test process with it.
//
//   CourierURLSessionProbe http://127.0.0.1:PORT/fault/head-without-blank-line
import Courier
import CourierURLSession
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: CourierURLSessionProbe URL\n".utf8))
    exit(2)
}
struct Probe: Endpoint {
    typealias Output = Data
    let target: String
    var baseURL: String? { target }
    var path: String { "" }
}
var configuration = ClientConfiguration(baseURL: nil, transport: "urlsession")
configuration.requestTimeout = .seconds(10)
let client = try NetworkClient(configuration: configuration, transport: URLSessionTransport())
do {
    let body = try await client.send(Probe(target: CommandLine.arguments[1]))
    print("completed: \(body.count) bytes")
} catch {
    print("failed: \(error)")
}
await client.shutdown()
