import Foundation
import Synchronization

/// Runs another program to its end, with a time limit, and collects what it printed. Used by
/// tests that need a process of their own (memory measurements) and by `courier-bench`'s workers.
public enum ChildProcess {
    /// The program could not be started.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// What the program did.
    public struct Outcome: Sendable {
        /// Its exit status (or the signal that ended it).
        public var status: Int32
        /// Whether it was stopped for running past its time limit.
        public var timedOut: Bool
        /// Its standard output.
        public var output: String
        /// Its standard error.
        public var errors: String
    }

    /// Serialises ``run(_:_:timeout:)``'s launches (not the programs, which still run side by side).
    private static let launchLock = NSLock()

    /// Runs `executable` with `arguments`; stops it (SIGTERM, then SIGKILL) after `timeout`.
    /// - Parameters:
    ///   - executable: The program's path.
    ///   - arguments: Its arguments.
    ///   - timeout: How long it may run.
    /// - Returns: Its status, whether it was stopped, and what it printed.
    /// - Throws: ``StartError`` when it cannot be started.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration) async throws(StartError) -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let finished = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in finished.continuation.finish() }
        do {
            // One launch at a time: Foundation's Process.run() is not safe to call from two
            // threads at once (a parallel test run crashed in its memcpy while two launched).
            try launchLock.withLock { try process.run() }
        } catch {
            throw StartError(description: "could not start \(executable): \(error)")
        }
        // Drain both pipes while the program runs, so that it never blocks on a full pipe.
        async let printed = readToEnd(output.fileHandleForReading)
        async let complained = readToEnd(errors.fileHandleForReading)
        let timedOut = await waitOrStop(process, finished: finished.stream, timeout: timeout)
        let out = await printed
        let err = await complained
        return Outcome(
            status: process.terminationStatus, timedOut: timedOut, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    /// Reads a pipe to its end on a thread of its own: the read blocks until the program exits,
    /// and blocking a thread of Swift's cooperative pool (two on a 2-core machine) for that long
    /// would stall every other task in the process.
    private static func readToEnd(_ handle: FileHandle) async -> Data {
        await withCheckedContinuation { continuation in
            let reader = Thread { continuation.resume(returning: handle.readDataToEndOfFile()) }
            reader.name = "courier-bench pipe reader"
            reader.start()
        }
    }

    /// An executable built beside the running program (a test binary finds the tools
    /// `swift build --build-tests` put next to it), searching up from its directory, since a test
    /// binary may sit inside a bundle directory.
    /// - Parameter name: The executable's file name.
    /// - Returns: Its path, or `nil` when it was not built.
    public static func sibling(named name: String) -> String? {
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
    public static func find(_ name: String) -> String? {
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
    /// - Returns: Whether it had to be stopped.
    private static func waitOrStop(_ process: Process, finished: AsyncStream<Void>, timeout: Duration) async -> Bool {
        final class Flag: Sendable {
            let raised = Atomic<Bool>(false)
        }
        let stopping = Flag()
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            stopping.raised.store(true, ordering: .relaxed)
            kill(pid, SIGTERM)
            try await Task.sleep(for: .seconds(2))
            kill(pid, SIGKILL)
        }
        for await _ in finished {}
        watchdog.cancel()
        process.waitUntilExit()
        return stopping.raised.load(ordering: .relaxed)
    }
}
