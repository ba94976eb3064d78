// Calls through URLSessionTransport in a process of its own, so that a crash inside
// FoundationNetworking cannot take the test process with it.
//
//   CourierURLSessionProbe URL
//       One GET; prints how it ended. URLSessionCrashTests runs it against FaultServer's faults
//       that crash FoundationNetworking; URLSessionProxyTests with the environment's proxy set.
//   CourierURLSessionProbe --mutations BASE_URL FIRST COUNT
//       GETs BASE_URL/mutate/<seed> for COUNT seeds from FIRST, one after another, printing
//       `start <seed>` before each call and `end <seed> <outcome> [message]` after it, so that the parent can
//       tell which seed a crash happened on (URLSessionMutationSweepTests).
//   CourierURLSessionProbe --shutdown-race BASE_URL ROUNDS
//       ROUNDS times: a new transport and client, four calls (GETs, buffered and streamed
//       uploads) and `shutdown()` racing them after 0 to 2 ms. Prints `raced ROUNDS` when every
//       call of every round ended (URLSessionShutdownRaceTests); a call that reached
//       FoundationNetworking after the session was invalidated would trap.
import Courier
import CourierURLSession
import Foundation

struct Probe: Endpoint {
    typealias Output = Data
    let target: String
    var baseURL: String? { target }
    var path: String { "" }
}

struct RawCall: Endpoint {
    typealias Output = Data
    var path: String
    var method: HTTPRequest.Method
    var body: RequestBody?
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
var configuration = ClientConfiguration(baseURL: nil, transport: "urlsession")
configuration.requestTimeout = .seconds(10)
configuration.maxRedirects = 0
// The environment's proxy, the one URLSession honours (none without a variable).
configuration.proxy = try ProxyConfiguration.environment()
let client = try NetworkClient(configuration: configuration, transport: URLSessionTransport())
if arguments.count == 3, arguments[0] == "--shutdown-race", let rounds = Int(arguments[2]) {
    var outcomes: [String: Int] = [:]
    for round in 0..<rounds {
        var raced = ClientConfiguration(baseURL: arguments[1], transport: "urlsession")
        raced.requestTimeout = .seconds(10)
        let racing = try NetworkClient(configuration: raced, transport: URLSessionTransport())
        let calls = (0..<4).map { index in
            Task { () -> String in
                let call: RawCall =
                    switch index % 3 {
                    case 0: RawCall(path: "bytes/100", method: .get, body: nil)
                    case 1: RawCall(path: "echo", method: .post, body: .data(Data(repeating: 7, count: 64 << 10)))
                    default:
                        RawCall(
                            path: "echo", method: .post,
                            body: .stream(
                                AsyncStream {
                                    $0.yield(Data(repeating: 1, count: 1024))
                                    $0.finish()
                                }, length: 1024))
                    }
                do {
                    _ = try await racing.send(call)
                    return "completed"
                } catch let error as NetworkError {
                    return "\(error.kind)"
                } catch {
                    return "foreign"
                }
            }
        }
        try await Task.sleep(for: .microseconds((round * 7919) % 2000))
        await racing.shutdown()
        for call in calls { outcomes[await call.value, default: 0] += 1 }
    }
    // Every staged body was removed, whichever way its call ended.
    let staged = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    say("staged-left \(staged.filter { $0.hasPrefix("courier-body-") }.count)")
    say("outcomes \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
    say("raced \(rounds)")
} else if arguments.count == 4, arguments[0] == "--mutations", let first = UInt64(arguments[2]), let count = UInt64(arguments[3]) {
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
    FileHandle.standardError.write(
        Data("usage: CourierURLSessionProbe URL | --mutations BASE_URL FIRST COUNT | --shutdown-race BASE_URL ROUNDS\n".utf8))
    exit(2)
}
await client.shutdown()
