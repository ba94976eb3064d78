import CZlib

/// Compresses bytes with the system zlib, so test servers can send encoded bodies.
public enum TestCompression {
    /// The format to write.
    public enum Format: Sendable {
        /// gzip (RFC 1952).
        case gzip
        /// The zlib format (RFC 1950): what HTTP's `deflate` means.
        case zlib
        /// Raw deflate (RFC 1951), which some servers send as `deflate`.
        case rawDeflate
    }

    /// `bytes` compressed in `format`, or empty if zlib fails (it does not for valid input).
    public static func compress(_ bytes: [UInt8], _ format: Format) -> [UInt8] {
        let windowBits: Int32 =
            switch format {
            case .gzip: 15 + 16
            case .zlib: 15
            case .rawDeflate: -15
            }
        var stream = z_stream()
        guard czlib_deflate_init(&stream, 9, windowBits) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        // deflateBound does not count the gzip header and trailer; 64 bytes more cover them.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        let code: Int32 = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard code == Z_STREAM_END else { return [] }
        return Array(output.prefix(Int(stream.total_out)))
    }
}
