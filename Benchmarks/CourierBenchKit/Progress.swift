import Foundation

/// Shows how far a run is, on standard error: a bar redrawn in place on a terminal, one line per
/// step otherwise (so logs stay readable).
public final class Progress: @unchecked Sendable {
    private let total: Int
    private let enabled: Bool
    private let redraws: Bool
    private var done = 0
    /// When the first step started: the estimate of the time left is the time per step so far.
    private var began: ContinuousClock.Instant?

    /// - Parameters:
    ///   - total: The steps the run has.
    ///   - enabled: `false` prints nothing (tests).
    public init(total: Int, enabled: Bool = true) {
        self.total = max(1, total)
        self.enabled = enabled
        self.redraws = isatty(STDERR_FILENO) == 1
    }

    /// Announces the step that starts now.
    func start(_ label: String) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if began == nil { began = now }
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let left = Self.timeLeft(done: done, total: total, elapsed: began.map { $0.duration(to: now) } ?? .zero)
        let line = "[\(bar)] \(done + 1)/\(total) \(label)" + (left.map { " · \($0)" } ?? "")
        write(redraws ? "\r\u{1B}[2K" + line : line + "\n")
    }

    /// The time the rest of the run should take at the pace of the steps done so far, as the
    /// progress line shows it (`about 3 min left`); `nil` before the first step is done.
    /// - Parameters:
    ///   - done: Steps finished.
    ///   - total: Steps in the run.
    ///   - elapsed: Time since the first step started.
    static func timeLeft(done: Int, total: Int, elapsed: Duration) -> String? {
        guard done > 0, total > done else { return nil }
        let parts = elapsed.components
        let elapsedSeconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        let seconds = elapsedSeconds / Double(done) * Double(total - done)
        if seconds < 90 { return "about \(max(1, Int(seconds.rounded()))) s left" }
        return "about \(Int((seconds / 60).rounded())) min left"
    }

    /// Marks the current step done.
    func finish() {
        done += 1
        if enabled, redraws, done == total { write("\r\u{1B}[2K") }
    }

    /// Prints a note on its own line.
    func note(_ text: String) {
        guard enabled else { return }
        write((redraws ? "\r\u{1B}[2K" : "") + text + "\n")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
