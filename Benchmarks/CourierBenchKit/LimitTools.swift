import CourierTestServer
import Foundation

/// wrk and h2load: what the server can serve to a client that does almost nothing but HTTP.
///
/// wrk covers HTTP/1.1 runs bounded by time; h2load covers HTTP/2, cleartext HTTP/2, and runs
/// bounded by a request count. Either one missing leaves its rows without a limit.
enum LimitTools {
    /// What one run of a tool measured.
    struct Measurement: Sendable, Equatable {
        var tool: String
        var completed: Int
        var failed: Int
        var seconds: Double
        var latency: LatencySummary?
        var firstError: String?
        var requestsPerSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    }

    /// The tool that would measure this cell, if it is installed and can send the request.
    ///
    /// h2load sends GET, or POST when it has a body (`-d`), and no other method: other requests get
    /// wrk over HTTP/1.1 bounded by time, or no limit.
    static func tool(for http: HTTPChoice, countBounded: Bool, request: BenchRequest) -> String? {
        if http == .http1, !countBounded, let wrk { return wrk }
        let h2loadSends = request.method == (request.body == nil ? "GET" : "POST")
        return h2loadSends ? h2load : nil
    }

    /// wrk's path, looked up once.
    static let wrk = ChildProcess.find("wrk")
    /// h2load's path, looked up once.
    static let h2load = ChildProcess.find("h2load")

    /// Runs the tool for one cell against `url`.
    /// - Returns: The measurement, or `nil` when no tool is installed for it.
    static func run(
        url: String, configuration: BenchConfiguration, request: BenchRequest, plan: RunPlan, cpu: Int?, workDirectory: String
    ) async throws(BenchError) -> Measurement? {
        guard let tool = tool(for: configuration.http, countBounded: plan.maxRequests != nil, request: request) else {
            return nil
        }
        let wrk = tool.hasSuffix("/wrk")
        var arguments: [String]
        if wrk {
            arguments = ["-t1", "-c\(configuration.concurrency)", "-d\(max(1, Int(plan.durationSeconds.rounded())))s", "--latency"]
            arguments += ["--timeout", "\(max(1, Int(request.timeoutSeconds.rounded(.up))))s"]
            if request != BenchRequest(timeoutSeconds: request.timeoutSeconds) {
                let script = "\(workDirectory)/request.lua"
                do { try wrkScript(request).write(toFile: script, atomically: true, encoding: .utf8) } catch {
                    throw .file("could not write \(script): \(error)")
                }
                arguments += ["-s", script]
            }
            arguments.append(url)
        } else {
            let streams =
                configuration.http == .http1
                ? ["--h1", "-c\(configuration.concurrency)", "-m1"] : ["-c1", "-m\(configuration.concurrency)"]
            arguments = ["-t1"] + streams
            if let count = plan.maxRequests {
                arguments.append("-n\(count)")
            } else {
                // h2load takes whole numbers with a unit.
                arguments += ["-D", "\(max(1, Int((plan.durationSeconds * 1000).rounded())))ms"]
                if plan.warmupSeconds > 0 { arguments.append("--warm-up-time=\(Int((plan.warmupSeconds * 1000).rounded()))ms") }
            }
            if let body = request.body {
                let file = "\(workDirectory)/body"
                guard FileManager.default.createFile(atPath: file, contents: Data(body)) else {
                    throw .file("could not write \(file)")
                }
                arguments += ["-d", file]
            }
            for line in request.headerLines { arguments += ["-H", line] }
            arguments.append("--connection-inactivity-timeout=\(max(1, Int(request.timeoutSeconds.rounded(.up))))")
            arguments.append(url)
        }
        var executable = tool
        if let cpu, let taskset = ChildProcess.find("taskset") {
            arguments = ["-c", String(cpu), tool] + arguments
            executable = taskset
        }
        let limit = Duration.seconds(plan.warmupSeconds + plan.durationSeconds + request.timeoutSeconds + 30)
        let outcome: ChildProcess.Outcome
        do {
            outcome = try await ChildProcess.run(executable, arguments, timeout: limit)
        } catch {
            throw .worker(error.description)
        }
        let name = wrk ? "wrk" : "h2load"
        guard outcome.status == 0, !outcome.timedOut else {
            let why = outcome.timedOut ? "ran past its time limit" : "exited with \(outcome.status)"
            return Measurement(
                tool: name, completed: 0, failed: 1, seconds: 0, latency: nil,
                firstError: "\(name) \(why): \(outcome.errors.suffix(300))")
        }
        return wrk ? parseWrk(outcome.output) : parseH2load(outcome.output)
    }

    /// A wrk script that sends `request`: method, headers and body, each as a Lua string escaped
    /// byte by byte (`\ddd`), so no byte of a header or body can end the string.
    static func wrkScript(_ request: BenchRequest) -> String {
        func lua(_ bytes: some Sequence<UInt8>) -> String {
            "\"" + bytes.map { "\\\(String($0))" }.joined() + "\""
        }
        var lines = ["wrk.method = \(lua(request.method.utf8))"]
        if let body = request.body { lines.append("wrk.body = \(lua(body))") }
        for line in request.headerLines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon]
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            lines.append("wrk.headers[\(lua(name.utf8))] = \(lua(value.utf8))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads wrk's summary: `N requests in Xs`, non-2xx and socket errors, and `--latency` percentiles.
    static func parseWrk(_ text: String) -> Measurement {
        var measurement = Measurement(tool: "wrk", completed: 0, failed: 0, seconds: 0, latency: nil, firstError: nil)
        var percentiles: [Int: Double] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            if words.count >= 4, words[1] == "requests", words[2] == "in", let count = Int(words[0]) {
                measurement.completed = count
                measurement.seconds = seconds(String(words[3].dropLast(words[3].hasSuffix(",") ? 1 : 0))) ?? 0
            } else if line.contains("Non-2xx or 3xx responses:"), let count = words.last.flatMap({ Int($0) }) {
                measurement.failed += count
                measurement.firstError = measurement.firstError ?? "non-2xx responses"
            } else if line.contains("Socket errors:") {
                let numbers = words.compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }
                let errors = numbers.reduce(0, +)
                if errors > 0 {
                    measurement.failed += errors
                    measurement.firstError = measurement.firstError ?? String(line.trimmingCharacters(in: .whitespaces))
                }
            } else if words.count == 2, words[0].hasSuffix("%"), let percent = Double(words[0].dropLast()),
                let value = seconds(String(words[1]))
            {
                percentiles[Int(percent)] = value * 1e6
            }
        }
        measurement.completed = max(0, measurement.completed - measurement.failed)
        if let p50 = percentiles[50], let p90 = percentiles[90], let p99 = percentiles[99] {
            measurement.latency = LatencySummary(p50: p50, p90: p90, p99: p99, p999: .nan, max: .nan)
        }
        return measurement
    }

    /// Reads h2load's `finished in Xs` and `requests: ... succeeded, ... failed, ... errored` lines.
    static func parseH2load(_ text: String) -> Measurement {
        var measurement = Measurement(tool: "h2load", completed: 0, failed: 0, seconds: 0, latency: nil, firstError: nil)
        for line in text.split(separator: "\n") {
            if line.hasPrefix("finished in ") {
                let value = line.dropFirst("finished in ".count).prefix { $0 != "," }
                measurement.seconds = seconds(String(value)) ?? 0
            } else if line.hasPrefix("requests: ") {
                for part in line.dropFirst("requests: ".count).split(separator: ",") {
                    let words = part.split(separator: " ")
                    guard words.count == 2, let count = Int(words[0]) else { continue }
                    switch words[1] {
                    case "succeeded": measurement.completed = count
                    case "failed": measurement.failed = count  // includes the errored and timed-out ones
                    default: break
                    }
                }
            } else if line.hasPrefix("status codes: ") {
                // `status codes: A 2xx, B 3xx, C 4xx, D 5xx`: 4xx and 5xx are errors for the benchmark.
                let counts = line.split(separator: ",").compactMap { part in
                    part.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) }
                }
                if counts.count == 4, counts[2] + counts[3] > 0 {
                    measurement.failed = max(measurement.failed, counts[2] + counts[3])
                    measurement.firstError = "\(counts[2]) 4xx and \(counts[3]) 5xx responses"
                }
            }
        }
        if measurement.failed > 0, measurement.firstError == nil { measurement.firstError = "h2load reported failed requests" }
        return measurement
    }

    /// `512.00us`, `1.20ms`, `2.00s`, `2.5m` → seconds.
    static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("us", 1e-6), ("ms", 1e-3), ("m", 60), ("s", 1), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)) { return value * scale }
        }
        return Double(text)
    }
}
