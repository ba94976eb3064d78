import CCurlReference
import Courier
import CourierCache
import CourierCurl
import Foundation

/// Runs one ``WorkerJob`` in this process: warm-up, then the counted run.
public enum Worker {
    /// Runs the job and measures it.
    /// - Parameter job: What to run.
    /// - Returns: The counted run's figures.
    /// - Throws: ``BenchError`` when the client cannot be set up.
    public static func run(_ job: WorkerJob) async throws -> WorkerResult {
        var pinned: Int?
        if let cpu = job.cpu, ProcessUsage.pin(toCPU: cpu) { pinned = cpu }
        var result: WorkerResult
        if job.transport == .reference {
            result = try runReference(job)
        } else {
            result = try await runCourier(job)
        }
        result.pinnedCPU = pinned
        return result
    }

    private static func runCourier(_ job: WorkerJob) async throws -> WorkerResult {
        let transport = try TransportFactory.make(
            job.transport, http: job.http, caFile: job.caFile, connections: job.concurrency, mockResponseBytes: job.mockResponseBytes)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-cache-\(UUID().uuidString)").path
        defer { if job.cache == .disk { try? FileManager.default.removeItem(atPath: directory) } }
        let cache: ResponseCache? =
            switch job.cache {
            case .memory: .memory()
            case .disk: try .disk(directory: directory)
            case nil: nil
            }
        let client = try TransportFactory.makeClient(
            transport: transport, name: job.transport, timeout: .seconds(job.request.timeoutSeconds), cache: cache)
        let endpoint = BenchEndpoint(url: job.url, request: job.request, httpVersion: job.http.preference)
        let streams = job.streams
        let call: @Sendable () async -> CallOutcome = {
            do {
                guard streams else {
                    let response = try await client.response(for: endpoint)
                    return .success(bytes: response.value.count, httpVersion: response.metrics.httpVersion)
                }
                let response = try await client.stream(endpoint)
                var bytes = 0
                for try await chunk in response.body { bytes += chunk.count }
                return .success(bytes: bytes, httpVersion: response.metrics.httpVersion)
            } catch let error as NetworkError {
                return .failure("\(error.kind): \(error.message)")
            } catch {
                return .failure("\(error)")
            }
        }
        // `curl-engine`: every caller, warm-up included, runs on the transport's thread.
        let preferred = job.transport == .curlEngine ? (transport as? CurlTransport)?.executor : nil
        if job.warmupSeconds > 0 {
            await withTaskExecutorPreference(preferred) {
                _ = await LoadLoop.run(
                    concurrency: job.concurrency, rate: job.rate, for: .seconds(job.warmupSeconds), maxRequests: nil, call: call)
            }
        }
        let cpuBefore = ProcessUsage.cpuSeconds()
        let tally = await withTaskExecutorPreference(preferred) {
            await LoadLoop.run(
                concurrency: job.concurrency, rate: job.rate, for: .seconds(job.durationSeconds), maxRequests: job.maxRequests, call: call)
        }
        let cpu = ProcessUsage.cpuSeconds() - cpuBefore
        await client.shutdown()
        return WorkerResult(
            completed: tally.completed, failed: tally.failed, firstError: tally.firstError, seconds: tally.elapsed.inSeconds,
            histogram: tally.histogram, cpuSeconds: cpu, peakRSSKiB: ProcessUsage.peakRSSKiB(),
            bytesReceived: tally.bytesReceived, bytesSent: Double(tally.completed * job.request.bodyCount),
            negotiatedHTTP: tally.negotiatedHTTP, pinnedCPU: nil)
    }

    /// Runs the C reference; latencies come back through a callback into a histogram.
    private static func runReference(_ job: WorkerJob) throws -> WorkerResult {
        final class Sink {
            var histogram = LatencyHistogram()
        }
        let sink = Sink()
        let request = job.request
        // C strings for the header lines, freed when the run ends.
        let lines = request.headerLines.map { strdup($0) }
        defer { for line in lines { free(line) } }
        guard !lines.contains(where: { $0 == nil }) else { throw BenchError.worker("out of memory for the header lines") }
        let headerPointers: [UnsafePointer<CChar>?] = lines.map { $0.map { UnsafePointer($0) } }
        let body = (request.body ?? []).map { CChar(bitPattern: $0) } + [0]
        var raw = courier_reference_result()
        let status: Int32 = job.url.withCString { url in
            body.withUnsafeBufferPointer { bodyPointer in
                headerPointers.withUnsafeBufferPointer { headerArray in
                    request.method.withCString { method in
                        withOptionalCString(job.caFile) { caFile in
                            var options = courier_reference_options()
                            options.url = url
                            options.concurrency = Int32(clamping: job.concurrency)
                            options.warmup_seconds = job.warmupSeconds
                            options.seconds = job.durationSeconds
                            options.max_requests = job.maxRequests ?? 0
                            options.http = Int32(job.http == .http1 ? 0 : job.http == .http2 ? 1 : 2)
                            options.ca_file = caFile
                            options.method = method
                            options.headers = headerArray.baseAddress
                            options.header_count = Int32(clamping: headerArray.count)
                            options.timeout_seconds = request.timeoutSeconds
                            options.rate = job.rate ?? 0
                            if request.body != nil {
                                options.body = bodyPointer.baseAddress
                                options.body_length = request.bodyCount
                            }
                            options.context = Unmanaged.passUnretained(sink).toOpaque()
                            options.record = { context, seconds in
                                guard let context else { return }
                                Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue().histogram.record(
                                    microseconds: seconds * 1e6)
                            }
                            return courier_reference_run(&options, &raw)
                        }
                    }
                }
            }
        }
        let text = withUnsafeBytes(of: raw.first_error_text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard status == 0 else { throw BenchError.worker("the C reference could not run: \(text)") }
        return WorkerResult(
            completed: raw.completed, failed: raw.failed, firstError: raw.failed > 0 ? text : nil, seconds: raw.seconds,
            histogram: sink.histogram, cpuSeconds: raw.cpu_seconds, peakRSSKiB: ProcessUsage.peakRSSKiB(),
            bytesReceived: raw.bytes_received, bytesSent: raw.bytes_sent,
            negotiatedHTTP: raw.http_version == 0 ? nil : raw.http_version >= 3 ? "2" : "1.1", pinnedCPU: nil)
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
