// Moves one large body through one transport and prints, as one JSON line, how many bytes moved,
// whether they arrived intact (the CRC-32 of a known pattern, PatternBody, checked end to end)
// and how much this process's resident memory grew while they did. Run by the large-body
// conformance cases in CourierTransportTests, each transport in a process of its own.
//
//   CourierMemoryProbe <curl|urlsession|ahc> <direction> <base URL> <bytes>
//
// Directions: `down` and `up` through the transport and a file body; `stream-down` and `stream-up`
// through NetworkClient.stream and a streamed request body (RequestBody.stream over the file);
// `openapi-down` and `openapi-up` through the generated InventoryClient over CourierClientTransport;
// `long-line`: a JSON Lines body of one line of `bytes` bytes, which must fail on the line cap.
//
// Exit status 0 with the JSON line, or 1 with a message on standard error.
import Courier
import CourierCurl
import CourierOpenAPI
import CourierStreaming
import CourierTestServer
import CourierTestSupport
import CourierURLSession
import Foundation
import HTTPTypes
import InventoryClient
import OpenAPIRuntime

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// Resident bytes now, from `/proc/self/statm`.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Samples resident memory every 5 ms until stopped; returns the highest reading.
final class PeakSampler: @unchecked Sendable {
    // @unchecked: `peak` and `running` are only touched under `lock`.
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private var thread: Thread?

    func start() {
        lock.withLock { peak = residentBytes() }
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = residentBytes()
                lock.withLock { peak = max(peak, now) }
                usleep(5_000)
            }
        }
        self.thread = thread
        thread.start()
    }

    func stop() -> Int {
        lock.withLock {
            running = false
            return max(peak, residentBytes())
        }
    }
}

struct Pattern: Endpoint {
    typealias Output = Data
    var path: String
}

struct Upload: Endpoint {
    typealias Output = Data
    var path: String
    var method: HTTPRequest.Method { .post }
    var body: RequestBody?
}

/// A file read in 64 KiB chunks as its reader asks for them: a streamed request body.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let url: URL

    struct AsyncIterator: AsyncIteratorProtocol {
        let url: URL
        var handle: FileHandle?
        var done = false

        mutating func next() async throws -> Data? {
            if done { return nil }
            if handle == nil { handle = try FileHandle(forReadingFrom: url) }
            guard let chunk = try handle?.read(upToCount: 64 * 1024), !chunk.isEmpty else {
                try handle?.close()
                done = true
                return nil
            }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(url: url) }
}

/// Reads `chunks` slower than the loopback delivers them; returns the bytes and whether they are the pattern.
func readSlowly<Chunks: AsyncSequence>(_ chunks: Chunks, expecting bytes: Int) async throws -> (Int, Bool)
where Chunks.Element: Sequence<UInt8> {
    var moved = 0
    var count = 0
    var checksum = PatternBody.Checksum()
    for try await chunk in chunks {
        let data = Data(chunk)
        moved += data.count
        checksum.update(data)
        count += 1
        if count % 16 == 0 { try await Task.sleep(for: .microseconds(200)) }
    }
    return (moved, checksum.value == PatternBody.crc32(byteCount: bytes))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let bytes = Int(arguments[3]), bytes > 0, let url = URL(string: arguments[2]), let host = url.host,
    let port = url.port
else {
    fail("usage: CourierMemoryProbe <curl|urlsession|ahc> <[stream-|openapi-]down|up> <base URL> <bytes>")
}
let (transportName, direction, baseURL) = (arguments[0], arguments[1], arguments[2])
// URLSession cannot pause a body: a reader slower than the loopback needs a read-ahead as large as
// the body (declared, `ConformanceTransport.DownloadBackpressure.none`). The long line keeps the
// default read-ahead, whose cap is what that case measures.
var session = URLSessionTransport.Configuration()
if direction.hasSuffix("down") { session.maxUnreadBytes = max(session.maxUnreadBytes, bytes) }
#if AsyncHTTPClient
    let registry = TransportRegistry([.curl(), .urlSession(session), .asyncHTTPClient()])
#else
    let registry = TransportRegistry([.curl(), .urlSession(session)])
#endif
var configuration = ClientConfiguration(baseURL: baseURL, transport: transportName)
configuration.requestTimeout = .seconds(120)
configuration.maxResponseBytes = 2 * bytes

do {
    let client = try NetworkClient(configuration: configuration, registry: registry)
    let sampler = PeakSampler()
    var moved = 0
    var intact = false
    let baseline: Int
    switch direction {
    case "down":
        // Through the transport's body stream, read slower than the loopback delivers it.
        let context = RequestContext(
            requestID: "memory-probe", deadline: .now + .seconds(120), maxResponseBytes: 2 * bytes,
            recorder: TransferRecorder(transport: transportName))
        func request(_ count: Int) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: "/bytes/\(count)")
        }
        // A warm-up first, so that the baseline includes the transport's threads, pools and buffers.
        _ = try await client.transport.send(request(4 << 20), body: nil, context: context).body.collect(upTo: 8 << 20)
        baseline = residentBytes()
        sampler.start()
        var chunks = 0
        var checksum = PatternBody.Checksum()
        let patternRequest = HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: "/pattern/\(bytes)")
        for try await chunk in try await client.transport.send(patternRequest, body: nil, context: context).body {
            moved += chunk.count
            checksum.update(chunk)
            chunks += 1
            if chunks % 16 == 0 { try await Task.sleep(for: .microseconds(200)) }
        }
        intact = checksum.value == PatternBody.crc32(byteCount: bytes)
    case "up":
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-probe-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try PatternBody.writeFile(at: file, byteCount: bytes)
        let expected = PatternBody.crc32(byteCount: bytes)
        _ = try await client.send(Upload(path: "echo", body: .data(Data(count: 4 << 20))))
        baseline = residentBytes()
        sampler.start()
        // The file as the whole body, to the route that answers with the length and CRC-32 it received.
        let answer = try await client.send(Upload(path: "digest", body: .file(file)))
        let digest = try JSONDecoder().decode(PatternBody.Digest.self, from: answer)
        moved = digest.bodyLength
        intact = digest.crc32 == expected
    case "stream-down", "openapi-down":
        // A warm-up as for `down`, then the body read slower than it arrives.
        if direction == "stream-down" {
            let warm = try await client.stream(Pattern(path: "pattern/\(4 << 20)"))
            for try await _ in warm.body {}
            baseline = residentBytes()
            sampler.start()
            let response = try await client.stream(Pattern(path: "pattern/\(bytes)"))
            (moved, intact) = try await readSlowly(response.body, expecting: bytes)
        } else {
            guard let server = URL(string: baseURL + InventoryService.prefix) else { fail("bad base URL") }
            let inventory = Client(serverURL: server, transport: CourierClientTransport(client: client))
            let warm = try await inventory.downloadContent(path: .init(itemID: 1), query: .init(bytes: 4 << 20))
            for try await _ in try warm.ok.body.binary {}
            baseline = residentBytes()
            sampler.start()
            let download = try await inventory.downloadContent(path: .init(itemID: 1), query: .init(bytes: Int64(bytes)))
            (moved, intact) = try await readSlowly(try download.ok.body.binary, expecting: bytes)
        }
    case "stream-up", "openapi-up":
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-probe-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try PatternBody.writeFile(at: file, byteCount: bytes)
        let expected = PatternBody.crc32(byteCount: bytes)
        let warmBytes = 4 << 20
        if direction == "stream-up" {
            _ = try await client.send(Upload(path: "digest", body: .stream(PatternBody.Chunks(byteCount: warmBytes), length: nil)))
            baseline = residentBytes()
            sampler.start()
            // The file as a producer's stream of chunks, of unknown length (sent chunked on HTTP/1.1).
            let answer = try await client.send(Upload(path: "digest", body: .stream(FileChunks(url: file), length: nil)))
            let digest = try JSONDecoder().decode(PatternBody.Digest.self, from: answer)
            moved = digest.bodyLength
            intact = digest.crc32 == expected
        } else {
            guard let server = URL(string: baseURL + InventoryService.prefix) else { fail("bad base URL") }
            let inventory = Client(serverURL: server, transport: CourierClientTransport(client: client))
            let warm = HTTPBody(PatternBody.Chunks(byteCount: warmBytes), length: .known(Int64(warmBytes)), iterationBehavior: .single)
            _ = try await inventory.uploadContent(path: .init(itemID: 1), body: .binary(warm))
            baseline = residentBytes()
            sampler.start()
            let upload = HTTPBody(FileChunks(url: file), length: .known(Int64(bytes)), iterationBehavior: .single)
            let digest = try await inventory.uploadContent(path: .init(itemID: 1), body: .binary(upload)).ok.body.json
            moved = digest.bodyLength
            intact = digest.crc32 == Int64(expected)
        }
    case "long-line":
        // One line of `bytes` bytes, far past the JSON Lines cap (1 MiB): it must fail as
        // invalid_response having held about the cap, not the line.
        struct Record: Decodable, Sendable {}
        func readLine(_ count: Int) async throws -> NetworkError? {
            do {
                for try await _ in client.jsonLines(Pattern(path: "bytes/\(count)"), as: Record.self) {}
                return nil
            } catch let error as NetworkError {
                return error
            }
        }
        _ = try await readLine(4 << 20)
        baseline = residentBytes()
        sampler.start()
        let error = try await readLine(bytes)
        intact = error?.kind == .invalidResponse && error?.message.contains("longer than") == true
        if !intact { fail("\(transportName) long-line: \(String(describing: error))") }
    default:
        fail("direction must be down, up, stream-down, stream-up, openapi-down, openapi-up or long-line")
    }
    let peak = sampler.stop()
    await client.shutdown()
    print(#"{"moved":\#(moved),"intact":\#(intact),"baseline":\#(baseline),"peak":\#(peak)}"#)
} catch {
    fail("\(transportName) \(direction): \(error)")
}
