import Foundation

extension NetworkClient {
    /// The records of a JSON Lines (NDJSON) endpoint, each line decoded as it arrives.
    ///
    /// One call through the chain, asking for `Accept: application/jsonl, application/x-ndjson`
    /// unless the endpoint sets its own. Lines end with LF (a CR before it is dropped); blank
    /// lines are skipped; a last line without its LF still counts. A line longer than
    /// `maxLineBytes` fails as ``NetworkError/Kind/invalidResponse``, one that does not decode as
    /// ``NetworkError/Kind/decoding`` naming its line number. Reading is the backpressure. Like an
    /// event stream, a feed is a long transfer: the endpoint's timeout bounds the wait for its head,
    /// and its body fails only when no byte arrives for ``NetworkClient/bodyStallLimit``.
    ///
    /// ```swift
    /// for try await change in client.jsonLines(ChangeFeed(), as: Change.self) { apply(change) }
    /// ```
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type of each line.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    ///   - maxLineBytes: The cap on one line; 1 MiB by default.
    /// - Returns: The records.
    public func jsonLines<E: Endpoint, Record: Decodable & Sendable>(
        _ endpoint: E, as type: Record.Type, decoder: JSONDecoder = JSONDecoder(), maxLineBytes: Int = 1 << 20
    ) -> JSONLines<Record> {
        // JSON Lines report no progress: the reporter ends at once.
        endpoint.progress?.finishUnused()
        let decoder = SendableDecoder(decoder: decoder)
        return JSONLines(maxLineBytes: max(1, maxLineBytes), decode: { try decoder.decoder.decode(Record.self, from: $0) }) {
            () async throws(NetworkError) in
            try await self.stream(
                StreamingEndpoint(base: endpoint, accept: "application/jsonl, application/x-ndjson"),
                bounds: TransferBounds(stall: self.bodyStallLimit, end: nil))
        }
    }
}

/// A `JSONDecoder` handed to the sequence's reader: it is only read, once per line, by one task.
private struct SendableDecoder: @unchecked Sendable {
    let decoder: JSONDecoder
}

/// The records of a JSON Lines endpoint (see ``NetworkClient/jsonLines(_:as:decoder:maxLineBytes:)``).
/// Every error it throws is a ``NetworkError``.
public struct JSONLines<Record: Sendable>: AsyncSequence, Sendable {
    /// A record.
    public typealias Element = Record

    let maxLineBytes: Int
    let decode: @Sendable (Data) throws -> Record
    let open: @Sendable () async throws(NetworkError) -> StreamedResponse

    /// Starts reading: the call starts on the first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(lines: self)
    }

    /// Reads and decodes one line at a time.
    public struct Iterator: AsyncIteratorProtocol {
        let lines: JSONLines
        private var body: ResponseBody.AsyncIterator?
        private var opened = false
        private var ended = false
        private var pending = Data()
        /// How much of `pending` is read, and where the search for the next LF starts.
        private var consumed = 0
        private var scanFrom = 0
        private var lineNumber = 0

        init(lines: JSONLines) {
            self.lines = lines
        }

        /// The next record, or `nil` at the end of the body.
        public mutating func next() async throws -> Record? {
            if !opened {
                opened = true
                body = try await lines.open().body.makeAsyncIterator()
            }
            while true {
                // `consumed` bytes of `pending` are read; the scan resumes where the last one
                // stopped, so a long line arriving in small pieces is scanned once.
                if let newline = pending[scanFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                    // The cap holds whatever the chunking: a long line that came whole with its LF too.
                    guard newline - consumed <= lines.maxLineBytes else { throw lineTooLong() }
                    var line = pending[consumed..<newline]
                    consumed = newline + 1
                    scanFrom = consumed
                    lineNumber += 1
                    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    return try decoded(Data(line))
                }
                scanFrom = pending.endIndex
                guard pending.endIndex - consumed <= lines.maxLineBytes else { throw lineTooLong() }
                if ended {
                    let last = pending[consumed...]
                    consumed = pending.endIndex
                    guard !last.isEmpty else { return nil }
                    lineNumber += 1
                    if last.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
                    return try decoded(Data(last.last == 0x0D ? last.dropLast() : last))
                }
                // Read bytes are dropped once they are most of the buffer (amortised: each byte
                // moves a bounded number of times).
                if consumed > 0, consumed - pending.startIndex >= (pending.endIndex - pending.startIndex) / 2 {
                    pending = Data(pending[consumed...])
                    consumed = pending.startIndex
                    scanFrom = pending.endIndex
                }
                do {
                    if let chunk = try await body?.next() {
                        pending.append(chunk)
                    } else {
                        ended = true
                    }
                } catch {
                    throw NetworkError.converting(error, phase: .receiving)
                }
            }
        }

        /// The failure for the line being read, longer than the cap.
        private func lineTooLong() -> NetworkError {
            NetworkError(
                kind: .invalidResponse, phase: .receiving,
                message: "line \(lineNumber + 1) of the JSON Lines body is longer than \(lines.maxLineBytes) bytes")
        }

        private func decoded(_ line: Data) throws -> Record {
            do {
                return try lines.decode(line)
            } catch {
                throw NetworkError(
                    kind: .decoding, phase: .decoding, message: "line \(lineNumber) of the JSON Lines body: \(error)", underlying: error)
            }
        }
    }
}
