import Foundation

/// Everything one `courier-bench run` produced.
public struct BenchReport: Codable, Sendable {
    /// When the run started (ISO 8601).
    public var date: String
    /// The command line, as typed.
    public var command: String
    /// CPUs online on this machine.
    public var cores: Int
    /// How the processes were placed, for example `server on CPU 0, clients on CPU 1`.
    public var placement: String
    /// The server measured: the embedded one or the user's URL.
    public var server: String
    /// Seconds per counted run, warm-up seconds, and the repeat count.
    public var durationSeconds: Double
    public var warmupSeconds: Double
    public var repeats: Int
    /// The linked libcurl's version.
    public var libcurl: String
    /// The Swift compiler that built courier-bench.
    public var swift: String
    /// The commit courier-bench was built from, when it can tell (`-dirty` with local changes).
    public var commit: String
    /// `closed loop` or `open loop at N requests/s`.
    public var loop: String
    /// The open loop's requests per second (`--rate`), `nil` for the closed loop.
    public var rate: Double?
    /// The limit tools found (`wrk`, `h2load`), or why none ran.
    public var limitTools: String
    /// The rows, cell by cell.
    public var rows: [ResultRow]
    /// The targets, checked.
    public var targets: [TargetCheck]

    /// Whether any row had errors.
    public var hasErrors: Bool { rows.contains(where: \.hasErrors) }
    /// Whether any target was missed.
    public var missedTargets: Bool { targets.contains { !$0.met } }
}
