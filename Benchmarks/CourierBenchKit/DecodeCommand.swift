import ArgumentParser
import CCurlReference
import Courier
import CourierMock
import CourierTestServer
import CourierXML
import Foundation

/// `courier-bench decode`: XML against JSON decode time and memory for the same content.
public struct DecodeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Compares decoding the same catalogue as XML (CourierXML) and as JSON, by time and by memory.",
        discussion: """
            Each size is one hotel catalogue written both ways (SampleDocuments). Time is Courier's own decode \
            time (RequestMetrics.decode) of calls through NetworkClient over the mock transport, the median of \
            --repeat calls after a warm-up. Memory is measured in a fresh worker process per format and size: how far \
            the resident set's peak rose during one decode, divided by the document's size.
            """)

    @Option(help: "Comma-separated document sizes in KiB.")
    var sizes: String = "100,1000"
    @Option(help: "Decodes per format and size (the median is reported).")
    var `repeat`: Int = 21
    @Option(help: "Internal: measure one decode's memory in this process (format:KiB).")
    var memoryWorker: String?

    public init() {}

    public func run() async throws {
        if let memoryWorker {
            try await Self.measureMemory(memoryWorker)
            return
        }
        let kibs = sizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !kibs.isEmpty, kibs.allSatisfy({ (1...65_536).contains($0) }) else {
            throw ValidationError("--sizes takes KiB values from 1 to 65536, comma-separated (got \"\(sizes)\")")
        }
        guard (1...1_000).contains(`repeat`) else { throw ValidationError("--repeat must be 1 to 1000") }
        let executable = try RunCommand.ownExecutable()
        print("size      format  bytes      hotels  decode (median)  MB/s     peak memory ÷ document")
        print("--------  ------  ---------  ------  ---------------  -------  ----------------------")
        for kib in kibs {
            var xmlTime = 0.0
            var jsonTime = 0.0
            for format in ["xml", "json"] {
                let document = Self.document(format, kib: kib)
                let median = try await Self.medianDecodeSeconds(format, document: document, times: `repeat`)
                let outcome = try await ChildProcess.run(
                    executable, ["decode", "--memory-worker", "\(format):\(kib)"], timeout: .seconds(120))
                let ratio =
                    Double(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)).map { String(format: "%.1f×", $0) } ?? "?"
                let hotels = document.components(separatedBy: format == "xml" ? "<hotel " : "\"id\"").count - 1
                let bytes = document.utf8.count
                let columns = [
                    "\(kib) KiB", format, "\(bytes)", "\(hotels)", String(format: "%.3f ms", median * 1000),
                    String(format: "%.1f", Double(bytes) / median / 1e6), ratio,
                ]
                print(
                    zip(columns, [10, 8, 11, 8, 17, 9, 0]).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
                        .joined())
                if format == "xml" { xmlTime = median } else { jsonTime = median }
            }
            print(String(format: "%@: XML ÷ JSON decode time %.2f×", "\(kib) KiB", xmlTime / jsonTime))
        }
    }

    static func document(_ format: String, kib: Int) -> String {
        format == "xml"
            ? SampleDocuments.hotelsXML(approximateBytes: kib * 1024) : SampleDocuments.hotelsJSON(approximateBytes: kib * 1024)
    }

    struct GetCatalogue: Endpoint {
        typealias Output = SampleCatalogue
        var path: String { "catalogue" }
    }

    /// The median of Courier's decode time over `times` calls (after two warm-up calls).
    static func medianDecodeSeconds(_ format: String, document: String, times: Int) async throws -> Double {
        let mock = MockTransport()
        let body = Data(document.utf8)
        let contentType = format == "xml" ? "application/xml" : "application/json"
        mock.stub(.get, "/catalogue") { _ in .status(200, headers: ["Content-Type": contentType], body: body) }
        var configuration = ClientConfiguration(baseURL: "http://bench.invalid")
        configuration.maxResponseBytes = 128 << 20
        let client = try NetworkClient(configuration: configuration, transport: mock)
        defer { Task { await client.shutdown() } }
        var samples: [Double] = []
        for round in 0..<(times + 2) {
            let response = try await client.response(for: GetCatalogue())
            guard let decode = response.metrics.decode else { throw ValidationError("the call reported no decode time") }
            if round >= 2 { samples.append(Double(decode.components.seconds) + Double(decode.components.attoseconds) / 1e18) }
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// Prints how far the peak resident set rose during one decode, divided by the document's size.
    static func measureMemory(_ spec: String) async throws {
        let parts = spec.split(separator: ":")
        guard parts.count == 2, let kib = Int(parts[1]), ["xml", "json"].contains(String(parts[0])) else {
            throw ValidationError("--memory-worker takes xml:KiB or json:KiB")
        }
        let format = String(parts[0])
        // A small warm-up call first, so the client, the runtime and the decoder's code are loaded.
        _ = try await medianDecodeSeconds(format, document: document(format, kib: 1), times: 1)
        let document = document(format, kib: kib)
        let body = Data(document.utf8)
        let mock = MockTransport()
        let contentType = format == "xml" ? "application/xml" : "application/json"
        mock.stub(.get, "/catalogue") { _ in .status(200, headers: ["Content-Type": contentType], body: body) }
        var configuration = ClientConfiguration(baseURL: "http://bench.invalid")
        configuration.maxResponseBytes = 128 << 20
        let client = try NetworkClient(configuration: configuration, transport: mock)
        // Hand freed memory back and restart the peak, so the peak measures the call alone.
        _ = courier_process_trim_heap()
        resetPeak()
        let before = status("VmRSS")
        let catalogue = try await client.response(for: GetCatalogue()).value
        let peak = status("VmHWM")
        precondition(!catalogue.hotel.isEmpty)
        await client.shutdown()
        print(String(format: "%.2f", Double(max(0, peak - before)) * 1024 / Double(body.count)))
    }

    /// Resets VmHWM to the current resident set (Linux 4.0 and later).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// A `Vm…` line of /proc/self/status, in KiB.
    static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? 0
        }
        return 0
    }
}
