// Calls through URLSessionTransport in a process of its own, so that a crash inside
// FoundationNetworking cannot take the test process with it.
//
//   CourierURLSessionProbe URL
//       One GET; prints how it ended. URLSessionCrashTests runs it against FaultServer's faults
//       that crash FoundationNetworking.
//   CourierURLSessionProbe --mutations BASE_URL FIRST COUNT
//       GETs BASE_URL/mutate/<seed> for COUNT seeds from FIRST, one after another, printing
//       `start <seed>` before each call and `end <seed> <outcome> [message]` after it, so that the parent can
//       tell which seed a crash happened on (URLSessionMutationSweepTests).
import Courier
import CourierURLSession
import Foundation

struct Probe: Endpoint {
    typealias Output = Data
    let target: String
    var baseURL: String? { target }
    var path: String { "" }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
var configuration = ClientConfiguration(baseURL: nil, transport: "urlsession")
configuration.requestTimeout = .seconds(10)
configuration.maxRedirects = 0
let client = try NetworkClient(configuration: configuration, transport: URLSessionTransport())
if arguments.count == 4, arguments[0] == "--mutations", let first = UInt64(arguments[2]), let count = UInt64(arguments[3]) {
    for seed in first..<(first + count) {
        say("start \(seed)")
        do {
            let response = try await client.response(for: Probe(target: "\(arguments[1])/mutate/\(seed)"))
            say("end \(seed) status-\(response.head.status.code)")
        } catch let error as NetworkError {
            let code = error.nativeCode.map { " [\($0.domain) \($0.code)]" } ?? ""
            say("end \(seed) \(error.kind) \(error.message.replacingOccurrences(of: "\n", with: " "))\(code)")
        } catch {
            say("end \(seed) foreign")
        }
    }
} else if arguments.count == 1 {
    do {
        let body = try await client.send(Probe(target: arguments[0]))
        print("completed: \(body.count) bytes")
    } catch {
        print("failed: \(error)")
    }
} else {
    FileHandle.standardError.write(Data("usage: CourierURLSessionProbe URL | --mutations BASE_URL FIRST COUNT\n".utf8))
    exit(2)
}
await client.shutdown()
