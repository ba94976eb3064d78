import CourierTestServer
import Foundation

/// What a report records about the build it came from.
enum BuildInfo {
    /// The Swift compiler that built this binary, as precise as `#if compiler` tells.
    static var swiftVersion: String {
        #if compiler(>=6.5)
            "6.5 or later"
        #elseif compiler(>=6.3.1)
            "6.3.1"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #else
            "before 6.2"
        #endif
    }

    /// The commit: `COURIER_BENCH_COMMIT` when set, else what git says about the checkout the
    /// executable was built in (with `-dirty` when it has local changes), else `unknown`.
    static func commit(executable: String) -> String {
        if let given = ProcessInfo.processInfo.environment["COURIER_BENCH_COMMIT"], !given.isEmpty { return given }
        let directory = (executable as NSString).deletingLastPathComponent
        guard let git = ChildProcess.find("git"),
            let head = run(git, ["-C", directory, "rev-parse", "--short=12", "HEAD"]), !head.isEmpty
        else { return "unknown" }
        let changes = run(git, ["-C", directory, "status", "--porcelain", "--untracked-files=no"]) ?? ""
        return changes.isEmpty ? head : head + "-dirty"
    }

    /// The leading number of a version such as `8.14.1` (0 when there is none).
    static func major(of version: String) -> Int {
        Int(version.prefix { $0.isNumber }) ?? 0
    }

    /// Runs a short command and returns its trimmed output, or `nil` when it fails.
    private static func run(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
