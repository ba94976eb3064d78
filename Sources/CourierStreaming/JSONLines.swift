import Courier
import Foundation

extension NetworkClient {
    /// The records of a JSON Lines (NDJSON) endpoint, each line decoded as it arrives.
    ///
    /// One call through the chain, asking for `Accept: application/jsonl, application/x-ndjson`
    /// unless the endpoint sets its own. Lines end with LF (a CR before it is dropped); blank
    /// lines are skipped; a last line without its LF still counts. A line longer than
    /// `maxLineBytes` fails as `NetworkError.Kind.invalidResponse`, one that does not decode as
    /// `NetworkError.Kind.decoding` naming its line number. Reading is the backpressure. Like an
    /// event stream, a feed is a long transfer: the endpoint's timeout bounds the wait for its head,
    /// and its body fails only when no byte arrives for `NetworkClient.bodyStallLimit`.
    ///
    /// ```swift
    /// for try await change in client.jsonLines(ChangeFeed(), as: Change.self) { apply(change) }
    /// ```
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type of each line.
    ///   - decoder: The decoder; `nil` (the default) uses the client's (`NetworkClient.jsonDecoder`).
    ///   - maxLineBytes: The cap on one line; 1 MiB by default.
    /// - Returns: The records.
    public func jsonLines<E: Endpoint, Record: Decodable & Sendable>(
        _ endpoint: E, as type: Record.Type, decoder: JSONDecoder? = nil, maxLineBytes: Int = 1 << 20
    ) -> JSONLines<Record> {
        // JSON Lines report no progress: the reporter ends at once.
        endpoint.progress?.finishUnused()
        let decoder = decoder ?? jsonDecoder
        return JSONLines(maxLineBytes: max(1, maxLineBytes), decode: { try decoder.decode(Record.self, from: $0) }) {
            () async throws(NetworkError) in
            try await self.stream(
                StreamingEndpoint(base: endpoint, accept: "application/jsonl, application/x-ndjson"),
                bounds: TransferBounds(stall: self.bodyStallLimit, end: nil))
        }
    }
}

/// The records of a JSON Lines endpoint (see `NetworkClient.jsonLines(_:as:decoder:maxLineBytes:)`).
/// Every error it throws is a `NetworkError`.
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
        private var framer: LineFramer

        init(lines: JSONLines) {
            self.lines = lines
            framer = LineFramer(maxLineBytes: lines.maxLineBytes)
        }

        /// The next record, or `nil` at the end of the body.
        public mutating func next() async throws -> Record? {
            if !opened {
                opened = true
                body = try await lines.open().body.makeAsyncIterator()
            }
            while true {
                switch try framer.next() {
                case .line(let line, let number): return try decoded(line, number: number)
                case .finished: return nil
                case .needMore: break
                }
                do {
                    if let chunk = try await body?.next() { framer.append(chunk) } else { framer.end() }
                } catch {
                    throw NetworkError.converting(error, phase: .receiving)
                }
            }
        }

        private func decoded(_ line: Data, number lineNumber: Int) throws -> Record {
            do {
                return try lines.decode(line)
            } catch {
                throw NetworkError(
                    kind: .decoding, phase: .decoding, message: "line \(lineNumber) of the JSON Lines body: \(error)", underlying: error)
            }
        }
    }
}
