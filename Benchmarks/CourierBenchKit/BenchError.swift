/// Why courier-bench could not do what it was asked.
public enum BenchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option's value is not allowed; the text names the option and what it accepts.
    case invalidOption(String)
    /// The combination cannot run on this build or machine.
    case unsupported(String)
    /// A worker process failed or printed no result.
    case worker(String)
    /// A file could not be read or written.
    case file(String)

    /// The message for the user.
    public var description: String {
        switch self {
        case .invalidOption(let text), .unsupported(let text), .worker(let text), .file(let text): text
        }
    }
}
