// Fails libcurl's allocations one at a time, as curl's torture tests do, and checks that the curl
// transport survives each: every call ends with a response or a typed NetworkError, nothing
// crashes, no transfer is left alive, a clean call afterwards succeeds, and after the client shuts
// down libcurl holds no more memory blocks than before it existed. Prints one JSON line. Run by
// AllocationFailureTests in a process of its own (libcurl takes its allocator once per process).
//
//   CourierAllocationProbe <base URL> <rounds>
//
// Round n fails the nth libcurl allocation after it starts, during four calls: a GET, a POST with
// a 20 KB body, a chunked streamed answer, and a GET with extra headers. The run stops after three
// rounds in a row in which no allocation was failed (n is past what the four calls allocate).
// Exit status 0 with the JSON line, or 1 with a message on standard error.
import Courier
import CourierCurl
import Foundation
import HTTPTypes

struct Call: Endpoint {
    typealias Output = Data
    var path: String
    var method: HTTPRequest.Method = .get
    var headers: RequestHeaders = [:]
    var body: RequestBody?
}

let calls = [
    Call(path: "bytes/2000"),
    Call(path: "echo", method: .post, body: .data(Data(repeating: 7, count: 20_000))),
    Call(path: "stream/4", headers: [:]),
    Call(path: "headers", headers: ["X-One": "1", "X-Two": "2", "X-Three": String(repeating: "3", count: 500)]),
]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, let rounds = Int(arguments[1]), rounds > 0 else {
    fail("usage: CourierAllocationProbe <base URL> <rounds>")
}
CurlAllocationTorture.install()
var configuration = ClientConfiguration(baseURL: arguments[0], transport: "curl")
// A failed allocation inside libcurl's multi handle can leave a transfer that never progresses
// (libcurl loses track of its socket); the deadline ends it. Kept short so such rounds cost little.
configuration.requestTimeout = .seconds(2)

do {
    // A first client: libcurl's global set-up happens, and what it keeps is the baseline.
    let warmUp = try NetworkClient(configuration: configuration, transport: try CurlTransport())
    for call in calls { _ = try await warmUp.send(call) }
    await warmUp.shutdown()
    let outstandingBefore = CurlAllocationTorture.outstanding

    let transport = try CurlTransport()
    let client = try NetworkClient(configuration: configuration, transport: transport)
    var outcomes: [String: Int] = [:]
    var timedOutRounds: [Int] = []
    var cleanRounds = 0
    var roundsRun = 0
    for round in 0..<rounds {
        roundsRun += 1
        let failedBefore = CurlAllocationTorture.failures
        CurlAllocationTorture.failAllocation(after: round)
        for call in calls {
            do {
                _ = try await client.send(call)
                outcomes["ok", default: 0] += 1
            } catch let error as NetworkError {
                outcomes[error.kind.description, default: 0] += 1
                if error.kind == .timedOut { timedOutRounds.append(round) }
            } catch {
                outcomes["untyped", default: 0] += 1
            }
        }
        CurlAllocationTorture.failAllocation(after: nil)
        if CurlAllocationTorture.failures == failedBefore {
            cleanRounds += 1
            if cleanRounds == 3 { break }
        } else {
            cleanRounds = 0
        }
    }
    var finalOK = true
    for call in calls {
        do { _ = try await client.send(call) } catch { finalOK = false }
    }
    // After the shutdown, when the engine has released every transfer it was still finishing.
    await client.shutdown()
    let liveTransfers = transport.liveTransfers
    let outstandingAfter = CurlAllocationTorture.outstanding
    let outcomeText = outcomes.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",")
    print(
        #"{"rounds":\#(roundsRun),"failuresInjected":\#(CurlAllocationTorture.failures),"outcomes":{\#(outcomeText)},"finalOK":\#(finalOK),"liveTransfers":\#(liveTransfers),"outstandingBefore":\#(outstandingBefore),"outstandingAfter":\#(outstandingAfter),"timedOutRounds":\#(timedOutRounds)}"#
    )
} catch {
    fail("\(error)")
}
