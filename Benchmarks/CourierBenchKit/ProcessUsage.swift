import CCurlReference
import Foundation

/// CPU time and memory of this process, and pinning it to a CPU.
enum ProcessUsage {
    /// User plus system CPU seconds this process has used so far.
    static func cpuSeconds() -> Double { max(0, courier_process_cpu_seconds()) }

    /// This process's peak resident set size so far, in KiB.
    static func peakRSSKiB() -> Int { max(0, courier_process_peak_rss_kib()) }

    /// The CPUs this machine has online.
    static var onlineCPUs: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// Pins every thread of this process to one CPU; threads started later inherit it from the
    /// thread that starts them.
    /// - Returns: Whether the kernel accepted it for every thread.
    static func pin(toCPU cpu: Int) -> Bool {
        guard cpu >= 0, cpu < onlineCPUs else { return false }
        var pinned = courier_pin_thread(0, Int32(cpu)) == 0
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.compactMap { Int32($0) } ?? []
        for thread in threads where courier_pin_thread(thread, Int32(cpu)) != 0 {
            pinned = false
        }
        return pinned
    }
}
