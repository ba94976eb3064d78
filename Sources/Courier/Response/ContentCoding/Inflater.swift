import CZlib
import Foundation

/// One content coding being undone with the system zlib: bytes go in with ``feed(_:)``, decoded
/// bytes come out with ``inflate(max:)``, a bounded amount at a time.
///
/// Not thread-safe: one reader drives it. The `z_stream` lives on the heap because zlib keeps a
/// pointer back to it and refuses a stream that moved.
final class Inflater {
    private let coding: ContentCoding
    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    /// Input not yet taken by zlib, from ``offset``.
    private var pending = Data()
    private var offset = 0
    /// Where zlib writes; reused.
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    /// Whether the current stream (gzip member) has ended.
    private(set) var ended = false
    /// Whether any byte was ever fed.
    private(set) var sawInput = false

    init(_ coding: ContentCoding) {
        self.coding = coding
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialized { _ = inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Whether input is waiting to be decoded.
    var hasPendingInput: Bool { offset < pending.count }

    /// Adds encoded bytes.
    func feed(_ bytes: Data) {
        guard !bytes.isEmpty else { return }
        sawInput = true
        if offset >= pending.count {
            pending = bytes
            offset = 0
        } else {
            var rest = Data(pending[(pending.startIndex + offset)...])
            rest.append(bytes)
            pending = rest
            offset = 0
        }
    }

    /// Decodes pending input into at most about `max` bytes (one scratch buffer more at most).
    /// Returns empty when it needs more input or the stream has ended.
    /// - Throws: ``NetworkError/Kind/decoding`` for corrupt input or bytes after the end.
    func inflate(max: Int) throws(NetworkError) -> Data {
        var output = Data()
        while output.count < max, hasPendingInput {
            if ended {
                // Bytes after the end: another gzip member (RFC 1952 allows several), or junk.
                guard coding == .gzip else { throw ContentCoding.failure("the deflate body has bytes after its end") }
                guard inflateReset(stream) == Z_OK else { throw ContentCoding.failure("zlib could not start the next gzip member") }
                ended = false
            }
            if !initialized {
                try start()
                guard initialized else { break }  // Deflate needs two bytes to pick its format.
            }
            let before = output.count
            let code = try step(into: &output)
            if code == Z_STREAM_END {
                ended = true
            } else if code == Z_BUF_ERROR || output.count == before && !hasPendingInput {
                break
            }
        }
        return output
    }

    /// Throws unless the stream ended and every byte was used.
    func finish(name: String) throws(NetworkError) {
        guard !sawInput || ended && !hasPendingInput else {
            throw ContentCoding.failure("the \(name) body ends before its compressed stream does (truncated)")
        }
    }

    /// Runs zlib once over the pending input into the scratch buffer; appends what came out.
    private func step(into output: inout Data) throws(NetworkError) -> Int32 {
        let available = pending.count - offset
        let code: Int32 = pending.withUnsafeBytes { input in
            scratch.withUnsafeMutableBytes { out in
                guard let inBase = input.baseAddress, let outBase = out.baseAddress else { return Z_BUF_ERROR }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBase.assumingMemoryBound(to: Bytef.self) + offset)
                stream.pointee.avail_in = uInt(min(available, Int(UInt32.max)))
                stream.pointee.next_out = outBase.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(out.count)
                return CZlib.inflate(stream, Z_NO_FLUSH)
            }
        }
        let consumed = available - Int(stream.pointee.avail_in)
        let produced = scratch.count - Int(stream.pointee.avail_out)
        offset += consumed
        if produced > 0 { output.append(contentsOf: scratch[0..<produced]) }
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch code {
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR: return code
        case Z_MEM_ERROR: throw ContentCoding.failure("zlib ran out of memory decoding the body")
        default: throw ContentCoding.failure("the \(coding == .gzip ? "gzip" : "deflate") body is corrupt (zlib \(code))")
        }
    }

    /// Initialises zlib for the coding. For deflate, the first two bytes tell the zlib format
    /// (RFC 1950, what HTTP means) from raw deflate (what some servers send).
    private func start() throws(NetworkError) {
        let windowBits: Int32
        switch coding {
        case .gzip:
            windowBits = 15 + 16
        case .deflate:
            guard pending.count - offset >= 2 else { return }
            let first = pending[pending.startIndex + offset]
            let second = pending[pending.startIndex + offset + 1]
            let zlibHeader = first & 0x0F == 8 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
            windowBits = zlibHeader ? 15 : -15
        }
        guard czlib_inflate_init(stream, windowBits) == Z_OK else { throw ContentCoding.failure("zlib could not start decoding") }
        initialized = true
    }
}
