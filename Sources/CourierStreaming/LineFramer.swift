import Courier
import Foundation

/// Cuts a body into JSON Lines records: LF-ended lines (a CR before the LF dropped), blank lines
/// skipped, the last line without its LF taken at the end, and every line held to a cap whatever
/// the chunking (a long line that came whole with its LF too). Synchronous, so it is tested and
/// fuzzed without a transport.
struct LineFramer {
    /// What ``next()`` found.
    enum Step: Equatable {
        /// A record's bytes, and its line number.
        case line(Data, number: Int)
        /// No whole line yet: ``append(_:)`` more, or ``end()``.
        case needMore
        /// The body ended and every line was given.
        case finished
    }

    let maxLineBytes: Int
    private var pending = Data()
    /// How much of `pending` is read, and where the search for the next LF starts.
    private var consumed = 0
    private var scanFrom = 0
    private var ended = false
    /// The number of the last line given (or being read, when one is too long).
    private(set) var lineNumber = 0

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Adds a chunk of the body.
    mutating func append(_ chunk: Data) {
        // Read bytes are dropped once they are most of the buffer (amortised: each byte moves a
        // bounded number of times).
        if consumed > 0, consumed - pending.startIndex >= (pending.endIndex - pending.startIndex) / 2 {
            let scanned = scanFrom - consumed
            pending = Data(pending[consumed...])
            consumed = pending.startIndex
            scanFrom = consumed + scanned
        }
        pending.append(chunk)
    }

    /// Marks the end of the body.
    mutating func end() {
        ended = true
    }

    /// The next record, or what is needed first.
    /// - Throws: `NetworkError.Kind.invalidResponse` for a line longer than the cap.
    mutating func next() throws(NetworkError) -> Step {
        while true {
            // The scan resumes where the last one stopped, so a long line arriving in small pieces
            // is scanned once.
            if let newline = pending[scanFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                guard newline - consumed <= maxLineBytes else { throw lineTooLong() }
                var line = pending[consumed..<newline]
                consumed = newline + 1
                scanFrom = consumed
                lineNumber += 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                return .line(Data(line), number: lineNumber)
            }
            scanFrom = pending.endIndex
            guard pending.endIndex - consumed <= maxLineBytes else { throw lineTooLong() }
            guard ended else { return .needMore }
            let last = pending[consumed...]
            consumed = pending.endIndex
            guard !last.isEmpty else { return .finished }
            lineNumber += 1
            if last.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .finished }
            return .line(Data(last.last == 0x0D ? last.dropLast() : last), number: lineNumber)
        }
    }

    /// The failure for the line being read, longer than the cap.
    private func lineTooLong() -> NetworkError {
        NetworkError(
            kind: .invalidResponse, phase: .receiving,
            message: "line \(lineNumber + 1) of the JSON Lines body is longer than \(maxLineBytes) bytes")
    }
}
