import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs another program to its end, with a time limit, and collects what it printed. Used by
/// tests that need a process of their own (memory measurements) and by `courier-bench`'s workers.
///
/// Package access only: it is a tool of this package's tests and benchmarks, not part of the
/// `CourierTestServer` product's public API.
package enum ChildProcess {
    /// The program could not be started.
    package struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        package var description: String
    }

    /// What the program did.
    package struct Outcome: Sendable {
        /// Its exit status (or the signal that ended it).
        package var status: Int32
        /// Whether it was stopped for running past its time limit.
        package var timedOut: Bool
        /// Its standard output.
        package var output: String
        /// Its standard error.
        package var errors: String
    }

    /// The most bytes kept of each of the program's outputs; the rest is read and dropped, so a
    /// chatty program can neither block on a full pipe nor fill memory.
    package static let maxKeptOutput = 64 << 20

    /// Runs `executable` with `arguments`; stops it (SIGTERM, then SIGKILL) after `timeout`.
    ///
    /// The program is started with `posix_spawn`, its standard input is `/dev/null`, and both
    /// outputs are read to their end on threads of their own while it runs. (Foundation's
    /// `Process.run()` crashed the test process in a `memmove` now and then under a parallel
    /// test run, even with launches serialised.)
    /// - Parameters:
    ///   - executable: The program's path.
    ///   - arguments: Its arguments.
    ///   - environment: Variables set for the program on top of this process's environment; none
    ///     by default.
    ///   - timeout: How long it may run.
    /// - Returns: Its status, whether it was stopped, and what it printed.
    /// - Throws: ``StartError`` when it cannot be started.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration
    ) async throws(StartError) -> Outcome {
        let child = try Spawned(executable: executable, arguments: arguments, environment: environment)
        // Drain both pipes while the program runs, so that it never blocks on a full pipe.
        async let printed = readToEnd(child.output)
        async let complained = readToEnd(child.errors)
        let (status, timedOut) = await waitOrStop(child.process, timeout: timeout)
        let out = await printed
        let err = await complained
        return Outcome(
            status: status, timedOut: timedOut, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    /// Reads a pipe to its end on a thread of its own, then closes it: the read blocks until the
    /// program exits, and blocking a thread of Swift's cooperative pool (two on a 2-core machine)
    /// for that long would stall every other task in the process.
    private static func readToEnd(_ descriptor: Int32) async -> [UInt8] {
        await withCheckedContinuation { continuation in
            let reader = Thread {
                var kept: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    let room = maxKeptOutput - kept.count
                    if room > 0 { kept.append(contentsOf: buffer[0..<min(count, room)]) }
                }
                close(descriptor)
                continuation.resume(returning: kept)
            }
            reader.name = "courier child pipe reader"
            reader.start()
        }
    }

    /// An executable built beside the running program (a test binary finds the tools
    /// `swift build --build-tests` put next to it), searching up from its directory, since a test
    /// binary may sit inside a bundle directory.
    /// - Parameter name: The executable's file name.
    /// - Returns: Its path, or `nil` when it was not built.
    package static func sibling(named name: String) -> String? {
        guard let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// Whether `name` is an executable on `PATH` (or an absolute path to one).
    /// - Parameter name: A program name or an absolute path.
    /// - Returns: Its path, or `nil`.
    package static func find(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let directories: [String] = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        for directory in directories {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Waits for the end; past the limit, sends SIGTERM, then SIGKILL two seconds later.
    ///
    /// The program is waited for without being reaped first (`waitid` with `WNOWAIT`), and the
    /// watchdog signals it only while it has not ended, under one lock: a signal can never reach
    /// another process that was given the same id after this one was reaped.
    /// - Returns: Its exit status (or the number of the signal that ended it), and whether it had
    ///   to be stopped.
    private static func waitOrStop(_ process: ProcessWatch, timeout: Duration) async -> (Int32, Bool) {
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            process.stop(with: SIGTERM)
            try await Task.sleep(for: .seconds(2))
            process.stop(with: SIGKILL)
        }
        let status = await withCheckedContinuation { continuation in
            let waiter = Thread { continuation.resume(returning: process.waitAndReap()) }
            waiter.name = "courier child waiter"
            waiter.start()
        }
        watchdog.cancel()
        return (status, process.wasStopped)
    }
}
