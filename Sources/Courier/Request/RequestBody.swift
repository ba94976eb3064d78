import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The body of a request: bytes in memory, a sequence of parts that may be files streamed
/// from disk, or chunks an async sequence produces while the request is sent.
///
/// Use the static constructors: ``data(_:contentType:)``, ``text(_:contentType:)``,
/// ``json(_:encoder:)-(_,JSONEncoder?)``, ``form(_:)``, ``file(_:contentType:)``, ``multipart(_:)``,
/// ``stream(_:length:contentType:)`` and ``replayableStream(length:contentType:_:)``. A constructor
/// that cannot encode its input (an `Encodable` that throws, a file that does not exist) does not
/// crash and does not throw: the body remembers the problem, and the call fails with
/// ``NetworkError/Kind/invalidRequest`` before anything is sent.
///
/// Every body but a one-shot ``stream(_:length:contentType:)`` is replayable: it can be read again
/// for a retry or a redirect (see ``isReplayable``).
public struct RequestBody: Sendable {
    enum Segment: Sendable {
        case bytes(Data)
        case file(URL, length: Int64)

        var length: Int64 {
            switch self {
            case .bytes(let data): Int64(data.count)
            case .file(_, let length): length
            }
        }

        /// A file part, with its size read now so the body's length is known up front.
        /// - Parameters:
        ///   - url: A local regular file.
        ///   - role: What the file is, for the error (`file`, `multipart file`).
        /// - Throws: ``NetworkError/Kind/invalidRequest`` when it cannot be read or is not a regular file.
        static func file(at url: URL, role: String) throws(NetworkError) -> Segment {
            let attributes: [FileAttributeKey: Any]
            do {
                attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            } catch {
                throw NetworkError(
                    kind: .invalidRequest, phase: .building, message: "the \(role) \(url.path) cannot be read", underlying: error)
            }
            guard (attributes[.type] as? FileAttributeType) == .typeRegular, let size = attributes[.size] as? NSNumber else {
                throw .invalidRequest("the \(role) \(url.path) is not a regular file")
            }
            return .file(url, length: size.int64Value)
        }
    }

    enum Storage: Sendable {
        case segments([Segment])
        case stream(BodyStream)
        case invalid(NetworkError)
        /// A JSON value not yet encoded: the client encodes it with its encoder when it builds
        /// the request (see ``encodingJSON(with:)``).
        case json(@Sendable (JSONEncoder) throws -> Data)
    }

    /// The body as it was made.
    private let made: Storage

    /// The body as it is read: a JSON value that no client encoded (a body handed to a transport
    /// outside a client) is written with a plain `JSONEncoder`. Within a client every JSON body is
    /// written once by the client's encoder before any link reads it (the request builder, and
    /// the chain where a middleware hands a body on).
    var storage: Storage {
        guard case .json = made else { return made }
        return encodingJSON(with: JSONEncoder()).made
    }

    /// The `Content-Type` this body sends unless the request sets one itself.
    public let contentType: String?

    init(storage: Storage, contentType: String?) {
        made = storage
        self.contentType = contentType
    }

    /// The body with a pending JSON value written by `encoder` (the client's); any other body as
    /// it is. The request builder calls it for an endpoint's body, and the chain for a body a
    /// middleware hands on.
    func encodingJSON(with encoder: JSONEncoder) -> RequestBody {
        guard case .json(let encode) = made else { return self }
        return .encoded(contentType: contentType ?? "application/json", format: "JSON") { try encode(encoder) }
    }

    /// The body's length in bytes, or `nil` when it is not known up front (a stream that announced
    /// none; HTTP/1.1 then sends it chunked) or the body could not be built.
    public var length: Int64? {
        switch storage {
        case .segments(let segments): segments.reduce(0) { $0 + $1.length }
        case .stream(let stream): stream.length
        case .invalid, .json: nil
        }
    }

    /// Whether the body can be read more than once, for a retry or a redirect that keeps the body.
    /// `false` only for a one-shot ``stream(_:length:contentType:)``: such a call is never sent
    /// twice (retry and redirects that keep the body give up with the error or response at hand).
    public var isReplayable: Bool {
        if case .stream(let stream) = storage { return stream.isReplayable }
        return true
    }

    /// The body's producer when it is a stream (see ``stream(_:length:contentType:)``); `nil` for
    /// bytes and files. Transports that read bodies synchronously (libcurl's read callback) pump a
    /// stream from a task of their own.
    public var streamSource: BodyStream? {
        if case .stream(let stream) = storage { return stream }
        return nil
    }

    /// The whole body when it is already in memory (no file parts); `nil` otherwise.
    /// Transports use this to avoid a stream for small bodies.
    public var bufferedData: Data? {
        guard case .segments(let segments) = storage else { return nil }
        switch segments.count {
        case 0:
            return Data()
        case 1:
            if case .bytes(let data) = segments[0] { return data }
            return nil
        default:
            guard segments.allSatisfy({ if case .bytes = $0 { true } else { false } }) else { return nil }
            var whole = Data()
            for case .bytes(let data) in segments { whole.append(data) }
            return whole
        }
    }

    /// The error that makes this body unusable, if any.
    var buildError: NetworkError? {
        if case .invalid(let error) = storage { return error }
        return nil
    }

    /// Raw bytes.
    /// - Parameters:
    ///   - data: The bytes to send.
    ///   - contentType: The content type; `application/octet-stream` by default.
    /// - Returns: The body.
    public static func data(_ data: Data, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(storage: .segments([.bytes(data)]), contentType: contentType)
    }

    /// Text, sent as UTF-8.
    /// - Parameters:
    ///   - text: The text to send.
    ///   - contentType: The content type; `text/plain; charset=utf-8` by default.
    /// - Returns: The body.
    public static func text(_ text: String, contentType: String? = "text/plain; charset=utf-8") -> RequestBody {
        .data(Data(text.utf8), contentType: contentType)
    }

    /// JSON from an `Encodable` value, with `Content-Type: application/json`.
    ///
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - encoder: The encoder to use; `nil` (the default) uses the client's
    ///     (``NetworkClient/jsonEncoder``, made from ``ClientConfiguration/json``), which writes
    ///     the value when the call's request is built.
    /// - Returns: The body; if encoding fails, the call fails with ``NetworkError/Kind/invalidRequest``.
    public static func json<Value: Encodable & Sendable>(_ value: Value, encoder: JSONEncoder? = nil) -> RequestBody {
        if let encoder { return json(value, encoder: encoder) }
        return RequestBody(storage: .json({ try $0.encode(value) }), contentType: "application/json")
    }

    /// JSON from any `Encodable` value, written now by `encoder`, with
    /// `Content-Type: application/json` (a value that is not `Sendable` cannot wait for the
    /// client's encoder).
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - encoder: The encoder to use.
    /// - Returns: The body; if encoding fails, the call fails with ``NetworkError/Kind/invalidRequest``.
    public static func json<Value: Encodable>(_ value: Value, encoder: JSONEncoder) -> RequestBody {
        .encoded(contentType: "application/json", format: "JSON") { try encoder.encode(value) }
    }

    /// A body made by an encoder (JSON, XML, an envelope): an encoding failure does not throw here,
    /// it fails the call with ``NetworkError/Kind/invalidRequest`` before anything is sent.
    /// - Parameters:
    ///   - contentType: The content type the body sends.
    ///   - format: The format's name, for the error message (`JSON`, `XML`).
    ///   - encode: Makes the bytes.
    /// - Returns: The body.
    package static func encoded(contentType: String, format: String, _ encode: () throws -> Data) -> RequestBody {
        do {
            return .data(try encode(), contentType: contentType)
        } catch {
            let failure =
                error as? NetworkError
                ?? NetworkError(
                    kind: .invalidRequest, phase: .building, message: "the \(format) body could not be encoded: \(error)",
                    underlying: error)
            return RequestBody(storage: .invalid(failure), contentType: contentType)
        }
    }

    /// A URL-encoded form (`application/x-www-form-urlencoded`); fields keep their order and
    /// names may repeat.
    /// - Parameter fields: Name and value pairs, as plain text.
    /// - Returns: The body.
    public static func form(_ fields: [(String, String)]) -> RequestBody {
        let encoded = fields.map { PercentEncoding.formComponent($0.0) + "=" + PercentEncoding.formComponent($0.1) }
        return .data(Data(encoded.joined(separator: "&").utf8), contentType: "application/x-www-form-urlencoded")
    }

    /// A file's contents as the whole body, streamed from disk when the body is sent (and read
    /// again from the start for a retry or a redirect), so memory stays bounded whatever its size.
    /// - Parameters:
    ///   - url: A local regular file; its size is read now, so the length is known up front.
    ///   - contentType: The content type; `application/octet-stream` by default.
    /// - Returns: The body; a missing or unreadable file makes the call fail with ``NetworkError/Kind/invalidRequest``.
    public static func file(_ url: URL, contentType: String? = "application/octet-stream") -> RequestBody {
        do {
            return RequestBody(storage: .segments([try .file(at: url, role: "file")]), contentType: contentType)
        } catch {
            return RequestBody(storage: .invalid(error), contentType: contentType)
        }
    }

    /// A `multipart/form-data` body; file parts are streamed from disk when the body is sent.
    /// - Parameter form: The parts.
    /// - Returns: The body; a missing or unreadable file makes the call fail with ``NetworkError/Kind/invalidRequest``.
    public static func multipart(_ form: MultipartFormData) -> RequestBody {
        do {
            return RequestBody(storage: .segments(try form.encodedSegments()), contentType: form.contentType)
        } catch {
            return RequestBody(storage: .invalid(error), contentType: form.contentType)
        }
    }

    /// Chunks an async sequence produces while the request is sent: nothing is buffered, and a
    /// transport takes the next chunk only when it can send it (curl and AsyncHTTPClient; the
    /// URLSession transport stages the body in a temporary file first).
    ///
    /// The body is one-shot: it is read once, so a call that carries it is never retried and a
    /// redirect that keeps the body is not followed (use ``replayableStream(length:contentType:_:)``
    /// when the chunks can be made again). A producer that gives more or fewer bytes than
    /// `length` fails the call with ``NetworkError/Kind/invalidRequest``, as does a negative length.
    ///
    /// - Parameters:
    ///   - chunks: The chunks, in order; an error it throws fails the call.
    ///   - length: The body's length in bytes, or `nil` when unknown (HTTP/1.1 then sends it chunked).
    ///   - contentType: The content type; `application/octet-stream` by default.
    /// - Returns: The body.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, length: Int64?, contentType: String? = "application/octet-stream"
    ) -> RequestBody where Chunks.Element == Data {
        streamed(length: length, contentType: contentType, replayable: false) { chunks.pulledStream() }
    }

    /// Chunks made anew by `makeChunks` for every read: like ``stream(_:length:contentType:)``,
    /// but a retry or a redirect that keeps the body calls `makeChunks` again and sends it whole.
    ///
    /// - Parameters:
    ///   - length: The body's length in bytes (every read must give exactly this many), or `nil`
    ///     when unknown.
    ///   - contentType: The content type; `application/octet-stream` by default.
    ///   - makeChunks: Makes the chunks from the start; called once per read.
    /// - Returns: The body.
    public static func replayableStream<Chunks: AsyncSequence & Sendable>(
        length: Int64?, contentType: String? = "application/octet-stream", _ makeChunks: @escaping @Sendable () -> Chunks
    ) -> RequestBody where Chunks.Element == Data {
        streamed(length: length, contentType: contentType, replayable: true) { makeChunks().pulledStream() }
    }

    private static func streamed(
        length: Int64?, contentType: String?, replayable: Bool, make: @escaping @Sendable () -> AsyncThrowingStream<Data, any Error>
    ) -> RequestBody {
        if let length, length < 0 {
            return RequestBody(
                storage: .invalid(.invalidRequest("a streamed request body cannot announce a negative length (\(length))")),
                contentType: contentType)
        }
        return RequestBody(storage: .stream(BodyStream(length: length, replayable: replayable, make: make)), contentType: contentType)
    }

    /// The body as chunks of at most `chunkSize` bytes, read lazily: file parts are read from
    /// disk only as the consumer asks for the next chunk, so memory stays bounded. A streamed
    /// body gives its producer's chunks as they come (`chunkSize` does not apply).
    ///
    /// - Parameter chunkSize: The largest chunk to produce; 64 KiB by default.
    /// - Returns: A stream that ends with an error if a file cannot be read or the producer fails.
    public func chunks(chunkSize: Int = 64 * 1024) -> AsyncThrowingStream<Data, any Error> {
        if case .stream(let stream) = storage { return stream.open() }
        let reader = BodyReader(storage: storage, chunkSize: max(1, chunkSize))
        return AsyncThrowingStream(unfolding: { try reader.next() })
    }
}

extension RequestBody {
    /// A synchronous reader over the body, for transports that pull bytes from a C callback
    /// (libcurl's read callback) on their own thread. File parts are read lazily, chunk by chunk.
    /// - Parameter chunkSize: The largest chunk `next()` returns.
    /// - Returns: A new reader positioned at the start; each call replays the body from the start.
    public func makeReader(chunkSize: Int = 64 * 1024) -> BodyReader {
        BodyReader(storage: storage, chunkSize: max(1, chunkSize))
    }
}

/// Reads a body's segments in order, one chunk at a time.
///
/// Meant for one consumer (a transport's read callback, or one stream). Sharing it is safe but
/// splits the body: its position is behind a lock, so consumers calling ``next()`` at once each
/// get distinct chunks, never the same bytes twice or a torn read. The lock (a ``Locked``) is taken
/// once per chunk and uncontended on the one-consumer path. After a failure every call throws it.
public final class BodyReader: Sendable {
    private let cursor: Locked<BodyCursor>

    init(storage: RequestBody.Storage, chunkSize: Int) {
        cursor = Locked(BodyCursor(storage: storage, chunkSize: chunkSize))
    }

    /// The next chunk, or `nil` at the end.
    /// - Throws: ``NetworkError`` (``NetworkError/Kind/invalidRequest``) when a file part cannot be
    ///   opened or read, or changed size since the body was made.
    public func next() throws(NetworkError) -> Data? {
        let result = cursor.withLock { cursor in Result { () throws(NetworkError) -> Data? in try cursor.next() } }
        return try result.get()
    }

    deinit { cursor.withLock { $0.close() } }
}

/// Where a ``BodyReader`` is in its body: the segments left, the open file part and the offset.
struct BodyCursor {
    private var segments: ArraySlice<RequestBody.Segment>
    private var failure: NetworkError?
    private var offsetInBytes = 0
    private var file: FileHandle?
    /// Bytes of the open file part still to send: its size when the body was made.
    private var fileRemaining: Int64 = 0
    private let chunkSize: Int

    init(storage: RequestBody.Storage, chunkSize: Int) {
        switch storage {
        case .segments(let segments): self.segments = segments[...]
        case .stream:
            self.segments = []
            failure = .invalidRequest("a streamed request body is read asynchronously (RequestBody.chunks), not by a BodyReader")
        case .invalid(let error):
            self.segments = []
            failure = error
        case .json:
            self.segments = []
            failure = .invalidRequest("a JSON body is encoded before it is read")
        }
        self.chunkSize = chunkSize
    }

    /// The next chunk, or `nil` at the end (see ``BodyReader/next()``).
    mutating func next() throws(NetworkError) -> Data? {
        if let failure { throw failure }
        while let segment = segments.first {
            switch segment {
            case .bytes(let data):
                if offsetInBytes < data.count {
                    let end = min(data.count, offsetInBytes + chunkSize)
                    let chunk = data.subdata(in: data.startIndex + offsetInBytes..<data.startIndex + end)
                    offsetInBytes = end
                    return chunk
                }
                offsetInBytes = 0
                segments.removeFirst()
            case .file(let url, let length):
                // Exactly the size announced when the body was made: the length the transport
                // framed the request with. A file that grew or shrank since fails the call.
                if file == nil {
                    do {
                        file = try FileHandle(forReadingFrom: url)
                    } catch {
                        throw fail(
                            NetworkError(
                                kind: .invalidRequest, phase: .sending, message: "could not open \(url.path) for the request body",
                                underlying: error))
                    }
                    fileRemaining = length
                }
                if fileRemaining > 0 {
                    let chunk = try read(upTo: Int(min(Int64(chunkSize), fileRemaining)), of: url)
                    guard !chunk.isEmpty else {
                        throw changedFile(url, announced: length, "shrank: it ended \(fileRemaining) bytes early")
                    }
                    fileRemaining -= Int64(chunk.count)
                    // Checked before the last chunk goes: a transport that framed the body by its
                    // length reads no further, and would send a grown file's first bytes as whole.
                    if fileRemaining == 0, try !read(upTo: 1, of: url).isEmpty {
                        throw changedFile(url, announced: length, "grew past them")
                    }
                    return chunk
                }
                if length == 0, try !read(upTo: 1, of: url).isEmpty {
                    throw changedFile(url, announced: length, "grew past them")
                }
                close()
                segments.removeFirst()
            }
        }
        return nil
    }

    /// Up to `count` bytes of the open file part (empty at its end).
    private mutating func read(upTo count: Int, of url: URL) throws(NetworkError) -> Data {
        do {
            return try file?.read(upToCount: count) ?? Data()
        } catch {
            throw fail(
                NetworkError(
                    kind: .invalidRequest, phase: .sending, message: "could not read \(url.path) for the request body", underlying: error))
        }
    }

    /// Closes the file part and keeps `error`: every later ``next()`` throws it.
    private mutating func fail(_ error: NetworkError) -> NetworkError {
        close()
        failure = error
        return error
    }

    /// Closes the open file part, if any.
    mutating func close() {
        try? file?.close()
        file = nil
    }

    private mutating func changedFile(_ url: URL, announced: Int64, _ what: String) -> NetworkError {
        fail(
            .invalidRequest(
                "the request body's file \(url.path) changed while it was sent: \(announced) bytes were announced, and it \(what)"))
    }
}
