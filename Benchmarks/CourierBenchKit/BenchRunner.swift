import CourierCurl
import CourierTestServer
import Foundation

/// Runs a ``RunPlan``: starts the embedded server, runs every client in its own worker process,
/// one after another, then the limit tools, and builds the report.
public struct BenchRunner: Sendable {
    /// The plan.
    public var plan: RunPlan
    /// The courier-bench executable that runs each worker.
    public var executable: String
    /// The command line shown in the report.
    public var commandLine: String
    /// Whether to show progress on standard error.
    public var showsProgress: Bool

    /// Creates a runner.
    public init(plan: RunPlan, executable: String, commandLine: String, showsProgress: Bool = true) {
        self.plan = plan
        self.executable = executable
        self.commandLine = commandLine
        self.showsProgress = showsProgress
    }

    /// Runs the plan.
    /// - Returns: The rows, the targets and how they were measured.
    /// - Throws: ``BenchError`` when the server cannot start or a file cannot be written.
    public func run() async throws -> BenchReport {
        let started = Date()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        } catch {
            throw BenchError.file("could not create \(work): \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: work) }

        let placement = pinProcesses()
        let servers = try await EmbeddedServers.start(for: plan, caDirectory: work)
        let rows: [ResultRow]
        do {
            rows = try await measure(servers: servers, work: work, clientCPU: placement.clientCPU)
        } catch {
            await servers.shutdown()
            throw error
        }
        await servers.shutdown()

        var finished = rows
        RowBuilder.addRatios(&finished)
        let tools = [("wrk", LimitTools.wrk), ("h2load", LimitTools.h2load)].compactMap { $0.1 == nil ? nil : $0.0 }
        return BenchReport(
            date: ISO8601DateFormatter().string(from: started), command: commandLine, cores: ProcessUsage.onlineCPUs,
            placement: placement.text, server: plan.url ?? "embedded loopback server (SwiftNIO, 1 event-loop thread)",
            durationSeconds: plan.durationSeconds, warmupSeconds: plan.warmupSeconds, repeats: plan.repeats,
            libcurl: CurlTransport.libcurlVersion, swift: BuildInfo.swiftVersion, commit: BuildInfo.commit(executable: executable),
            loop: (plan.rate.map { "open loop at \(Int($0)) requests/s per client (latency from each request's scheduled time)" }
                ?? "closed loop (each caller sends its next request when its last one ends)")
                + (plan.streams ? "; Courier clients read each body as a stream (--stream)" : ""),
            rate: plan.rate,
            limitTools: plan.rate != nil
                ? "not run (open loop)"
                : !plan.runsLimitTools ? "not run (--no-limit)" : tools.isEmpty ? "none installed" : tools.joined(separator: ", "),
            rows: finished,
            targets: TargetCheck.check(
                finished, pinned: placement.clientCPU != nil, libcurlMajor: BuildInfo.major(of: CurlTransport.libcurlVersion),
                openLoop: plan.rate != nil, streamed: plan.streams))
    }

    /// Runs every cell: repeats outermost within a cell, so that noise spreads over every client.
    private func measure(servers: EmbeddedServers, work: String, clientCPU: Int?) async throws -> [ResultRow] {
        let runnable = plan.configurations.map { cell in
            plan.transports.filter { unsupportedReason($0, cell) == nil }
        }
        let limitSteps =
            plan.runsLimitTools
            ? plan.configurations.filter {
                LimitTools.tool(
                    for: $0.http, countBounded: plan.maxRequests != nil, request: $0.scenario.request(from: plan.request)) != nil
            }.count : 0
        let steps = (runnable.reduce(0) { $0 + $1.count } + limitSteps) * plan.repeats
        let progress = Progress(total: steps, enabled: showsProgress)
        var rows: [ResultRow] = []
        for (cell, clients) in zip(plan.configurations, runnable) {
            let url = servers.url(for: cell, plan: plan)
            let request = cell.scenario.request(from: plan.request)
            var runs: [BenchTransport: [WorkerResult]] = [:]
            var limits: [LimitTools.Measurement] = []
            for round in 1...plan.repeats {
                for transport in clients {
                    progress.start("\(cell) · \(transport.rawValue) · run \(round)/\(plan.repeats)")
                    var job = WorkerJob(
                        transport: transport, url: url, request: request, http: cell.http, concurrency: cell.concurrency,
                        warmupSeconds: plan.warmupSeconds, durationSeconds: plan.durationSeconds, maxRequests: plan.maxRequests,
                        caFile: servers.caFile ?? plan.caFile, cpu: clientCPU, mockResponseBytes: cell.scenario.responseBytes ?? 1024)
                    job.cache = cell.scenario.cache
                    job.rate = plan.rate
                    job.streams = plan.streams
                    runs[transport, default: []].append(await runWorker(job, work: work, progress: progress))
                    progress.finish()
                }
                if plan.runsLimitTools,
                    LimitTools.tool(for: cell.http, countBounded: plan.maxRequests != nil, request: request) != nil
                {
                    progress.start("\(cell) · limit · run \(round)/\(plan.repeats)")
                    let limitURL = servers.limitURL(for: cell, plan: plan)
                    if let measurement = try await LimitTools.run(
                        url: limitURL, configuration: cell, request: request, plan: plan, cpu: clientCPU, workDirectory: work)
                    {
                        limits.append(measurement)
                    }
                    progress.finish()
                }
            }
            for transport in plan.transports {
                if let reason = unsupportedReason(transport, cell) {
                    rows.append(RowBuilder.unsupported(transport, cell, reason: reason))
                } else {
                    rows.append(RowBuilder.row(transport, cell, runs: runs[transport] ?? []))
                }
            }
            if let limit = RowBuilder.row(limit: limits, cell) { rows.append(limit) }
        }
        return rows
    }

    private func unsupportedReason(_ transport: BenchTransport, _ cell: BenchConfiguration) -> String? {
        TransportFactory.unsupportedReason(transport, http: cell.http, privateCA: plan.url == nil || plan.caFile != nil)
    }

    /// Runs one worker process; a worker that fails counts as one failed request with its message.
    private func runWorker(_ job: WorkerJob, work: String, progress: Progress) async -> WorkerResult {
        func failure(_ text: String) -> WorkerResult {
            progress.note("  \(job.transport.rawValue): \(text)")
            return WorkerResult(
                completed: 0, failed: 1, firstError: text, seconds: 0, histogram: LatencyHistogram(), cpuSeconds: 0, peakRSSKiB: 0,
                bytesReceived: 0, bytesSent: 0, negotiatedHTTP: nil, pinnedCPU: nil)
        }
        let file = "\(work)/job.json"
        do {
            try JSONEncoder().encode(job).write(to: URL(fileURLWithPath: file))
        } catch {
            return failure("could not write the job to \(file): \(error)")
        }
        // Requests in flight when the run stops may take their whole deadline.
        let limit = Duration.seconds(job.warmupSeconds + job.durationSeconds + job.request.timeoutSeconds + 30)
        let outcome: ChildProcess.Outcome
        do {
            outcome = try await ChildProcess.run(executable, ["worker", "--job-file", file], timeout: limit)
        } catch {
            return failure(error.description)
        }
        let lastLine = outcome.output.split(separator: "\n").last.map(String.init) ?? ""
        guard outcome.status == 0, !outcome.timedOut, let result = try? JSONDecoder().decode(WorkerResult.self, from: Data(lastLine.utf8))
        else {
            let why = outcome.timedOut ? "ran past its time limit" : "exited with status \(outcome.status)"
            let detail = outcome.errors.split(separator: "\n").suffix(3).joined(separator: " | ")
            return failure("worker \(why)\(detail.isEmpty ? "" : ": \(detail)")")
        }
        return result
    }

    /// Pins this process (and so the embedded server's threads) to CPU 0 when asked and possible.
    private func pinProcesses() -> (text: String, clientCPU: Int?) {
        guard plan.pin else { return ("not pinned (pass --pin to put the server on CPU 0 and each client on CPU 1)", nil) }
        guard ProcessUsage.onlineCPUs >= 2 else { return ("not pinned: --pin needs 2 CPUs, this machine has 1", nil) }
        guard ProcessUsage.pin(toCPU: 0) else { return ("not pinned: the kernel refused sched_setaffinity", nil) }
        let server = plan.url == nil ? "embedded server" : "courier-bench"
        return ("\(server) on CPU 0, each client process on CPU 1", 1)
    }
}
