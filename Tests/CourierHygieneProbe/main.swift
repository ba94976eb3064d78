// Checks that a client leaves nothing behind: after a warm-up client (so that process-wide pools
// and threads exist), it notes the open file descriptors and the threads, runs a second client
// through successful, failing, streamed and cancelled calls, shuts it down, and prints, as one JSON
// line, what is open and running before and after. Run by HygieneTests, each transport in a
// process of its own (the test process's descriptors and threads move with every test beside it).
//
//   CourierHygieneProbe <curl|urlsession|ahc> <base URL> <calls>
//
// Exit status 0 with the JSON line, or 1 with a message on standard error.
import Courier
import CourierCurl
import CourierTestServer
import CourierURLSession
import Foundation

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// The names of this process's threads (`/proc/self/task/*/comm`), sorted.
func threadNames() -> [String] { ProcessSnapshot.now().threads.sorted() }

/// A GET of `path` whose body is returned as it came.
struct Fetch: Endpoint {
    typealias Output = Data
    var path: String
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, let calls = Int(arguments[2]), calls > 0 else {
    fail("usage: CourierHygieneProbe <curl|urlsession|ahc> <base URL> <calls>")
}
let (transportName, baseURL) = (arguments[0], arguments[1])
#if AsyncHTTPClient
    let registry = TransportRegistry([.curl(), .urlSession(), .asyncHTTPClient()])
#else
    let registry = TransportRegistry([.curl(), .urlSession()])
#endif
var configuration = ClientConfiguration(baseURL: baseURL, transport: transportName)
configuration.requestTimeout = .seconds(60)

/// One round of calls: successes, a 404, a streamed body, calls cancelled while the server holds them.
func exercise(_ client: NetworkClient, calls: Int) async {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<calls {
            group.addTask {
                let path = ["bytes/100", "status/404", "stream/20", "bytes/20000"][index % 4]
                _ = try? await client.send(Fetch(path: path))
            }
        }
        for _ in 0..<4 {
            group.addTask {
                let held = Task { try await client.send(Fetch(path: "delay/30000")) }
                try? await Task.sleep(for: .milliseconds(50))
                held.cancel()
                _ = try? await held.value
            }
        }
    }
}

do {
    let warmUp = try NetworkClient(configuration: configuration, registry: registry)
    await exercise(warmUp, calls: 8)
    await warmUp.shutdown()
    let before = ProcessSnapshot.now()

    var client: NetworkClient? = try NetworkClient(configuration: configuration, registry: registry)
    if let client { await exercise(client, calls: calls) }
    let threadsDuring = threadNames()
    await client?.shutdown()
    // A transport's own thread resumes the shutdown as its last act, then ends, and sockets close a
    // moment after: up to two seconds for the process to settle.
    let afterShutdown = try await ProcessSnapshot.settled(towards: before, limit: .seconds(2))
    // Then the client is released too: what it still held (URLSession frees its connections only
    // when the session itself goes) must go within two seconds.
    client = nil
    let afterRelease = try await ProcessSnapshot.settled(towards: before, limit: .seconds(2))
    let report: [String: Any] = [
        "descriptorsBefore": before.descriptors.count, "leakedAfterShutdown": afterShutdown.descriptorsBeyond(before),
        "leakedAfterRelease": afterRelease.descriptorsBeyond(before), "threadsBefore": before.threads.sorted(),
        "threadsDuring": threadsDuring, "threadsAfter": afterShutdown.threads.sorted(),
    ]
    let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} catch {
    fail("\(transportName): \(error)")
}
