import Foundation

/// Shows how far a run is, on standard error: a bar redrawn in place on a terminal, one line per
/// step otherwise (so logs stay readable).
public final class Progress: @unchecked Sendable {
    private let total: Int
    private let enabled: Bool
    private let redraws: Bool
    private var done = 0

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
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let line = "[\(bar)] \(done + 1)/\(total) \(label)"
        write(redraws ? "\r\u{1B}[2K" + line : line + "\n")
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
