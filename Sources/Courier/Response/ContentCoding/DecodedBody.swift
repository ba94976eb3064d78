import Foundation

/// Undoes a response's content codings as its body is read, under the client's limits.
///
/// Each read returns at most ``chunkBytes`` decoded bytes, so one small compressed chunk never
/// becomes one huge allocation; the decoded total counts against the body cap and the ratio as it
/// grows, so a bomb fails before memory does. Single reader, like the body it wraps.
final class DecodedBody: @unchecked Sendable {
    /// The most decoded bytes one read returns.
    static let chunkBytes = 256 * 1024

    private var source: ResponseBody.AsyncIterator
    /// The codings to undo, outermost first.
    private let stages: [Inflater]
    private let names: String
    private let limits: Limits
    private var sourceDone = false
    private var encodedBytes = 0
    private var decodedBytes = 0

    /// The caps a decoded body is held to.
    struct Limits: Sendable {
        /// The largest decoded body.
        var maxBytes: Int
        /// The most decoded bytes per received byte, past ``Decompression/ratioFloorBytes``.
        var maxRatio: Int
    }

    init(_ body: ResponseBody, codings: [ContentCoding], names: String, limits: Limits) {
        source = body.makeAsyncIterator()
        stages = codings.map(Inflater.init)
        self.names = names
        self.limits = limits
    }

    /// The body decoded: in memory at once when it arrived in memory, otherwise as a stream.
    /// - Throws: For a body in memory, what decoding it throws.
    static func decode(_ body: ResponseBody, codings: [ContentCoding], names: String, limits: Limits) throws(NetworkError) -> ResponseBody {
        let reader = DecodedBody(body, codings: codings, names: names, limits: limits)
        if case .buffered(let data) = body.storage {
            return ResponseBody(data: try reader.decodeAll(data))
        }
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await reader.next() })
        return ResponseBody(stream: stream, expectedLength: nil)
    }

    /// The next decoded chunk, or `nil` at the end.
    func next() async throws -> Data? {
        while true {
            let decoded = try pull(stages.count - 1)
            if !decoded.isEmpty { return try counted(decoded) }
            if sourceDone {
                try finish()
                return nil
            }
            if let chunk = try await source.next() {
                encodedBytes += chunk.count
                stages[0].feed(chunk)
            } else {
                sourceDone = true
            }
        }
    }

    /// Decodes a whole body that is already in memory.
    private func decodeAll(_ data: Data) throws(NetworkError) -> Data {
        encodedBytes = data.count
        stages[0].feed(data)
        sourceDone = true
        var whole = Data()
        while true {
            let decoded = try pull(stages.count - 1)
            if decoded.isEmpty { break }
            whole.append(try counted(decoded))
        }
        try finish()
        return whole
    }

    /// Decoded bytes from stage `index`, pulling from the stages before it as needed; empty when
    /// the first stage needs more input.
    private func pull(_ index: Int) throws(NetworkError) -> Data {
        let stage = stages[index]
        while true {
            let out = try stage.inflate(max: Self.chunkBytes)
            if !out.isEmpty || index == 0 { return out }
            let upstream = try pull(index - 1)
            if upstream.isEmpty { return out }
            stage.feed(upstream)
        }
    }

    /// Counts decoded bytes against the limits.
    private func counted(_ decoded: Data) throws(NetworkError) -> Data {
        decodedBytes += decoded.count
        if decodedBytes > limits.maxBytes {
            throw NetworkError.responseTooLarge(limit: limits.maxBytes, announced: nil)
        }
        if decodedBytes > Decompression.ratioFloorBytes, decodedBytes / max(encodedBytes, 1) > limits.maxRatio {
            throw NetworkError(
                kind: .responseTooLarge, phase: .receiving,
                message:
                    "the \(names) body decodes to more than \(limits.maxRatio) times its \(encodedBytes) received bytes (a decompression bomb?); raise decompression.maxRatio if it is expected"
            )
        }
        return decoded
    }

    /// Throws unless every stage's stream ended with nothing left over. An empty body (nothing
    /// received at all) is an empty body.
    private func finish() throws(NetworkError) {
        guard encodedBytes > 0 else { return }
        for stage in stages { try stage.finish(name: names) }
    }
}
