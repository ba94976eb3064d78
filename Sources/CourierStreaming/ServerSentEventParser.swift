import Courier
import Foundation

/// One event of a `text/event-stream` (server-sent events).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event` field, or `message` when it had none.
    public var type: String
    /// Its `data` lines, joined with newlines.
    public var data: String
    /// The last event ID when it was dispatched (its own `id`, or an earlier event's), or `nil`
    /// when none was ever sent. A reconnection sends it as `Last-Event-ID`.
    public var id: String?

    /// An event.
    /// - Parameters:
    ///   - type: The type; `message` by default.
    ///   - data: The data.
    ///   - id: The last event ID.
    public init(type: String = "message", data: String, id: String? = nil) {
        self.type = type
        self.data = data
        self.id = id
    }
}

/// Reads `text/event-stream` bytes into events, by the WHATWG HTML standard's rules ("Server-sent
/// events", parsing an event stream): lines end with CRLF, LF or CR; a leading byte-order mark is
/// dropped; a line starting with `:` is a comment; `data` lines are joined with newlines; `id`
/// sets the last event ID (unless it holds a NUL); `retry` sets the reconnection time (digits
/// only); other fields are ignored; a blank line dispatches the event, unless it has no data; an
/// event cut off by the end of the stream is dropped.
///
/// Every buffer has a cap: a line, or an event's data, longer than ``maxEventBytes`` fails as
/// `NetworkError.Kind.invalidResponse`.
public struct ServerSentEventParser: Sendable {
    /// The longest line, and the most data one event may gather, in bytes as received. (The
    /// event's text may be longer: an invalid UTF-8 byte becomes U+FFFD, three bytes, so at most
    /// three times this.)
    public let maxEventBytes: Int
    /// The last event ID: the `id` in force when the last event was dispatched, or `nil`. (An `id`
    /// line counts only once its event is dispatched, so a reconnection never skips an event the
    /// connection cut off.)
    public private(set) var lastEventID: String?
    /// The `id` read so far (the standard's "last event ID buffer"), which a dispatch makes the
    /// last event ID.
    private var idBuffer: String?
    /// The reconnection time the stream's last valid `retry` field set, or `nil`.
    public private(set) var reconnectionTime: Duration?

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var type: String?
    private var afterCR = false
    /// The first bytes, held until they are known to be a byte-order mark or not; `nil` after.
    private var markBytes: [UInt8]? = []

    /// The default of ``maxEventBytes``: 1 MiB.
    public static let defaultMaxEventBytes = 1 << 20

    /// A parser at the start of a stream.
    /// - Parameters:
    ///   - maxEventBytes: The cap on a line and on one event's data.
    ///   - lastEventID: The last event ID from an earlier connection, if any.
    public init(maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes, lastEventID: String? = nil) {
        self.maxEventBytes = max(1, maxEventBytes)
        self.lastEventID = lastEventID
        idBuffer = lastEventID
    }

    /// Starts over for a new connection, keeping the last event ID and the reconnection time.
    public mutating func restart() {
        self = ServerSentEventParser(maxEventBytes: maxEventBytes, lastEventID: lastEventID)
            .keeping(reconnectionTime: reconnectionTime)
    }

    private func keeping(reconnectionTime: Duration?) -> Self {
        var copy = self
        copy.reconnectionTime = reconnectionTime
        return copy
    }

    /// Reads the next bytes of the stream.
    /// - Parameter bytes: The bytes, in any pieces.
    /// - Returns: The events they completed, in order.
    /// - Throws: `NetworkError` (`invalid_response`) for a line or an event past the cap.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(NetworkError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if var pending = markBytes {
                // A byte-order mark (EF BB BF) at the very start is not part of the stream.
                pending.append(byte)
                let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
                if pending == mark {
                    markBytes = nil
                } else if mark.starts(with: pending) {
                    markBytes = pending
                } else {
                    markBytes = nil
                    for held in pending { try take(held, into: &events) }
                }
                continue
            }
            try take(byte, into: &events)
        }
        return events
    }

    private mutating func take(_ byte: UInt8, into events: inout [ServerSentEvent]) throws(NetworkError) {
        switch byte {
        case UInt8(ascii: "\n") where afterCR:
            afterCR = false  // the LF of a CRLF whose CR ended the line
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            afterCR = byte == UInt8(ascii: "\r")
            if let event = try endLine() { events.append(event) }
        default:
            afterCR = false
            guard line.count < maxEventBytes else { throw Self.tooLong("a line", maxEventBytes) }
            line.append(byte)
        }
    }

    private static func tooLong(_ what: String, _ limit: Int) -> NetworkError {
        NetworkError(kind: .invalidResponse, phase: .receiving, message: "the event stream has \(what) longer than \(limit) bytes")
    }

    /// Processes the line read, and returns the event a blank line dispatches.
    private mutating func endLine() throws(NetworkError) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var valueStart = colon.map { line.index(after: $0) } ?? line.endIndex
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        switch field {
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else { throw Self.tooLong("an event", maxEventBytes) }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
            hasData = true
        case "id" where !value.contains(0):
            idBuffer = String(decoding: value, as: UTF8.self)
        case "retry" where !value.isEmpty && value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }):
            // More digits than a day's milliseconds hold are a day.
            let milliseconds = value.count > 9 ? 86_400_000 : min(86_400_000, Int(String(decoding: value, as: UTF8.self)) ?? 0)
            reconnectionTime = .milliseconds(milliseconds)
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            type = nil
        }
        lastEventID = idBuffer
        guard hasData else { return nil }
        let text = String(decoding: data.dropLast(), as: UTF8.self)
        return ServerSentEvent(type: type.flatMap { $0.isEmpty ? nil : $0 } ?? "message", data: text, id: lastEventID)
    }
}
