// The floor under any async transport: what Swift's concurrency runtime alone costs to hand a
// call to another thread and take the answer back, with no HTTP, no I/O and no Courier.
//
// 64 tasks (the benchmark's concurrency) each await, in a loop, a continuation that one dedicated
// thread resumes, as a transport's engine thread would; by default inside a cancellation handler,
// which every cancellable transport needs. Pin it to one CPU to compare with `courier-bench`'s
// client figures:
//
//   swift build -c release --product AsyncFloor
//   taskset -c 1 .build/release/AsyncFloor 20000          # continuation + cancellation handler
//   taskset -c 1 .build/release/AsyncFloor 20000 plain    # the continuation alone
//
// It prints the CPU time per call (user + system, both threads).
import Foundation

/// One thread that resumes whatever continuations it is handed, in batches.
final class ResumingThread: @unchecked Sendable {
    // @unchecked Sendable: `waiting` and `stopping` are only touched with `condition` held.
    private let condition = NSCondition()
    private var waiting: [UnsafeContinuation<Int, Never>] = []
    private var stopping = false

    func hand(_ continuation: UnsafeContinuation<Int, Never>) {
        condition.lock()
        waiting.append(continuation)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    func run() {
        var batch: [UnsafeContinuation<Int, Never>] = []
        while true {
            condition.lock()
            while waiting.isEmpty && !stopping { condition.wait() }
            if waiting.isEmpty && stopping {
                condition.unlock()
                return
            }
            swap(&batch, &waiting)
            condition.unlock()
            for continuation in batch { continuation.resume(returning: 1) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

let arguments = CommandLine.arguments.dropFirst()
let perTask = max(1, min(1_000_000, arguments.first.flatMap { Int($0) } ?? 20_000))
let plain = arguments.contains("plain")
let tasks = 64

let resumer = ResumingThread()
let thread = Thread { resumer.run() }
thread.start()

let cpuBefore = cpuSeconds()
let start = ContinuousClock.now
await withTaskGroup(of: Int.self) { group in
    for _ in 0..<tasks {
        group.addTask {
            var total = 0
            for _ in 0..<perTask {
                if plain {
                    total += await withUnsafeContinuation { resumer.hand($0) }
                } else {
                    total += await withTaskCancellationHandler {
                        await withUnsafeContinuation { resumer.hand($0) }
                    } onCancel: {
                    }
                }
            }
            return total
        }
    }
    for await _ in group {}
}
let elapsed = start.duration(to: .now)
resumer.stop()
let calls = Double(tasks * perTask)
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(
    String(
        format: "%@: %.2f µs of CPU per call, %.0f calls/s",
        plain ? "continuation alone" : "continuation + cancellation handler", (cpuSeconds() - cpuBefore) / calls * 1e6,
        calls / seconds))
