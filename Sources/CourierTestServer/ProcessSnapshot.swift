import Foundation

/// What this process has open and running: its file descriptors (`/proc/self/fd`, each with what
/// it points at) and its threads (`/proc/self/task/*/comm`). For checks that something left
/// nothing behind: take one before, one after, and ask what the second has ``beyond(_:)`` the first.
public struct ProcessSnapshot: Sendable {
    /// Open descriptors by number, each with what it points at (`socket:[123]`, a path…).
    public var descriptors: [String: String]
    /// The threads' names, as the kernel keeps them (at most 15 bytes).
    public var threads: [String]

    /// A snapshot with the given contents (for tests of the comparisons).
    public init(descriptors: [String: String], threads: [String]) {
        self.descriptors = descriptors
        self.threads = threads
    }

    /// The process now.
    public static func now() -> ProcessSnapshot {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var descriptors: [String: String] = [:]
        for name in names {
            // A descriptor that closed between the listing and this read is not open: leave it out
            // (it showed up as `?` and failed a hygiene check once).
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else { continue }
            // A file unlinked while open reads as `path (deleted)`: the same descriptor, so the
            // suffix is dropped. (A child process inherits the parent test process's open files,
            // which the parent may delete between two snapshots: that failed a hygiene check once.)
            descriptors[name] = target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
        }
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let threads = tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return ProcessSnapshot(descriptors: descriptors, threads: threads)
    }

    /// Descriptors open here that were not open in `baseline` (or now point elsewhere), each as
    /// `fd N → target`, sorted.
    public func descriptorsBeyond(_ baseline: ProcessSnapshot) -> [String] {
        descriptors.filter { baseline.descriptors[$0.key] != $0.value }.map { "fd \($0.key) → \($0.value)" }.sorted()
    }

    /// Threads running here beyond those running in `baseline` (a name counts as often as it
    /// runs), leaving out libdispatch's worker pool (names with `qos`, such as
    /// `com.apple.root.default-qos` cut to 15 bytes), which grows and shrinks on its own.
    public func threadsBeyond(_ baseline: ProcessSnapshot) -> [String] {
        var before = Dictionary(baseline.threads.map { ($0, 1) }, uniquingKeysWith: +)
        var left: [String] = []
        for name in threads where !name.contains("qos") {
            if let count = before[name], count > 0 { before[name] = count - 1 } else { left.append(name) }
        }
        return left.sorted()
    }

    /// Everything here beyond `baseline`: descriptors, then threads (as `thread NAME`).
    public func beyond(_ baseline: ProcessSnapshot) -> [String] {
        descriptorsBeyond(baseline) + threadsBeyond(baseline).map { "thread \($0)" }
    }

    /// The process once it stops moving towards `baseline`: sockets close and threads end a
    /// moment after the work that used them returns. Polls every 10 ms for at most `limit`.
    public static func settled(towards baseline: ProcessSnapshot, limit: Duration = .seconds(3)) async throws -> ProcessSnapshot {
        var now = ProcessSnapshot.now()
        let end = ContinuousClock.now + limit
        while !now.beyond(baseline).isEmpty, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
            now = ProcessSnapshot.now()
        }
        return now
    }
}
