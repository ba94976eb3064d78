import CCurl
import Courier
import Foundation

/// A request body as libcurl's read callback takes it, in the form the body has: none, bytes that
/// can be read again from the start (memory and files), or a producer's stream.
enum CurlUpload {
    /// No body: the read callback ends at once.
    case none
    /// A body in memory or in files, read chunk by chunk; libcurl may rewind it to send the
    /// request again.
    case replayable(Cursor)
    /// A streamed body whose producer is not opened yet: the first read callback opens it.
    /// (`indirect`: a `BodyStream` is large, and the upload moves with every transition of its
    /// transfer's state.)
    indirect case streamNotOpened(BodyStream)
    /// A streamed body read through its pump; `paused` while the read callback paused the
    /// transfer because the pump had nothing yet.
    case streamed(CurlUploadPump, paused: Bool)

    /// Where the read callback is in a replayable body. A class, changed in place by the read
    /// callback (engine thread only): the upload moves with every transition of its transfer's
    /// state, and a `RequestBody` inline made it 600 bytes.
    final class Cursor {
        /// The body.
        let body: RequestBody
        /// The reader, made at the first read (and again after a rewind).
        var reader: BodyReader?
        /// The chunk being sent, and how much of it libcurl has taken.
        var chunk = Data()
        var offset = 0

        init(body: RequestBody) {
            self.body = body
        }
    }

    /// What one read callback did.
    enum Step {
        /// This many bytes were written into libcurl's buffer.
        case wrote(Int)
        /// The body is complete.
        case end
        /// The producer has nothing yet: pause sending until it has.
        case pause
        /// The body cannot be read.
        case failed(NetworkError)
    }

    /// The upload for `body`.
    init(_ body: RequestBody?) {
        guard let body else {
            self = .none
            return
        }
        if let stream = body.streamSource { self = .streamNotOpened(stream) } else { self = .replayable(Cursor(body: body)) }
    }

    /// Whether sending is paused, waiting for the producer.
    var isPaused: Bool {
        if case .streamed(_, let paused) = self { return paused }
        return false
    }

    /// Writes the next bytes into `buffer`.
    /// - Parameter openPump: Makes the pump for a streamed body, at the first read.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer, openPump: (BodyStream) -> CurlUploadPump) -> Step {
        // Moved out and back (not switched in place, which copies the payload per callback).
        var taken = CurlUpload.none
        swap(&self, &taken)
        switch consume taken {
        case .none:
            return .end
        case .replayable(let cursor):
            self = .replayable(cursor)
            return cursor.read(into: buffer)
        case .streamNotOpened(let stream):
            self = .streamed(openPump(stream), paused: false)
            return read(into: buffer, openPump: openPump)
        case .streamed(let pump, var paused):
            defer { self = .streamed(pump, paused: paused) }
            switch pump.take(upTo: buffer.count) {
            case .bytes(let chunk):
                chunk.withUnsafeBytes { source in
                    guard let base = source.baseAddress, let target = buffer.baseAddress else { return }
                    target.copyMemory(from: base, byteCount: chunk.count)
                }
                return .wrote(chunk.count)
            case .wait:
                paused = true
                return .pause
            case .end:
                return .end
            case .failed(let error):
                return .failed(error)
            }
        }
    }

    /// The producer has bytes again: sending is no longer paused. Returns whether it was.
    mutating func unpause() -> Bool {
        guard case .streamed(let pump, paused: true) = self else { return false }
        self = .streamed(pump, paused: false)
        return true
    }

    /// Reads a replayable body from its first byte again. Returns `false` for any other body,
    /// which cannot be rewound.
    mutating func rewind() -> Bool {
        switch self {
        case .none: return true
        case .replayable(let cursor):
            self = .replayable(Cursor(body: cursor.body))
            return true
        case .streamNotOpened, .streamed: return false
        }
    }

    /// Stops a streamed body's producer (the transfer left the multi handle).
    func stop() {
        if case .streamed(let pump, _) = self { pump.stop() }
    }
}

extension CurlUpload.Cursor {
    /// Copies the next bytes of the body into `buffer`, reading a new chunk when the last one is
    /// sent.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> CurlUpload.Step {
        while offset >= chunk.count {
            do {
                if reader == nil { reader = body.makeReader(chunkSize: max(16 * 1024, buffer.count)) }
                guard let next = try reader?.next() else { return .end }
                chunk = next
                offset = 0
            } catch {
                return .failed(NetworkError.converting(error, phase: .sending))
            }
        }
        let count = min(buffer.count, chunk.count - offset)
        chunk.withUnsafeBytes { source in
            guard let base = source.baseAddress, let target = buffer.baseAddress else { return }
            target.copyMemory(from: base + offset, byteCount: count)
        }
        offset += count
        return .wrote(count)
    }
}
