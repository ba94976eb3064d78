import CZlib
import Foundation

/// A body whose every byte is known in advance, for checking that a long transfer moved each byte
/// once and in order: 64 KiB blocks of a fixed pattern, each starting with its own index (8 bytes,
/// little-endian), so a dropped, repeated or reordered block changes the checksum.
///
/// The test server sends it at `/pattern/<bytes>`; `/digest` answers with the length and CRC-32
/// of whatever request body it received (``Digest``).
public enum PatternBody {
    /// The size of one block.
    public static let blockBytes = 64 * 1024

    /// What `/digest` answers.
    public struct Digest: Codable, Sendable, Hashable {
        /// The request body's length.
        public var bodyLength: Int
        /// Its CRC-32.
        public var crc32: UInt32

        /// A digest of `bodyLength` bytes whose CRC-32 is `crc32`.
        public init(bodyLength: Int, crc32: UInt32) {
            self.bodyLength = bodyLength
            self.crc32 = crc32
        }
    }

    /// The pattern every block starts from.
    private static let base: [UInt8] = (0..<blockBytes).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ ($0 >> 9)) }

    /// Block `index`, cut to `count` bytes (at most ``blockBytes``).
    public static func block(_ index: Int, count: Int = blockBytes) -> [UInt8] {
        var bytes = base
        withUnsafeBytes(of: UInt64(index).littleEndian) { for (offset, byte) in $0.enumerated() { bytes[offset] = byte } }
        return Array(bytes.prefix(count))
    }

    /// The pattern's bytes in `range` (block after block, as a body of this pattern holds them).
    public static func bytes(in range: Range<Int>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let index = offset / blockBytes
            let start = offset - index * blockBytes
            let end = min(blockBytes, range.upperBound - index * blockBytes)
            bytes += block(index)[start..<end]
            offset = index * blockBytes + end
        }
        return bytes
    }

    /// The CRC-32 of the first `byteCount` bytes of the pattern.
    public static func crc32(byteCount: Int) -> UInt32 {
        var checksum = Checksum()
        var index = 0
        var remaining = byteCount
        while remaining > 0 {
            let size = min(remaining, blockBytes)
            checksum.update(block(index, count: size))
            remaining -= size
            index += 1
        }
        return checksum.value
    }

    /// Writes the first `byteCount` bytes of the pattern to a new file at `url`.
    /// - Throws: When the file cannot be written.
    public static func writeFile(at url: URL, byteCount: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var index = 0
        var remaining = byteCount
        while remaining > 0 {
            let size = min(remaining, blockBytes)
            try handle.write(contentsOf: block(index, count: size))
            remaining -= size
            index += 1
        }
    }

    /// A running CRC-32 (zlib's).
    public struct Checksum: Sendable {
        /// The CRC-32 of everything given so far.
        public private(set) var value: UInt32 = 0

        /// Starts empty.
        public init() {}

        /// Adds bytes.
        public mutating func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { raw in
                guard let base = raw.bindMemory(to: UInt8.self).baseAddress, !raw.isEmpty else { return }
                value = UInt32(CZlib.crc32(uLong(value), base, uInt(raw.count)))
            }
        }
    }
}

extension PatternBody {
    /// The first `byteCount` bytes of the pattern as an async sequence of blocks, for streamed
    /// request bodies: each block is made only when its reader asks for it, so a sequence of any
    /// size holds one block in memory.
    public struct Chunks: AsyncSequence, Sendable {
        /// A block.
        public typealias Element = Data
        /// How many bytes the sequence gives in all.
        public let byteCount: Int

        /// A sequence of `byteCount` pattern bytes.
        /// - Parameter byteCount: The total, at least 0.
        public init(byteCount: Int) {
            self.byteCount = Swift.max(0, byteCount)
        }

        /// Gives the blocks in order.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let byteCount: Int
            var index = 0

            /// The next block, or `nil` after the last.
            public mutating func next() async -> Data? {
                let start = index * blockBytes
                guard start < byteCount else { return nil }
                defer { index += 1 }
                return Data(block(index, count: Swift.min(blockBytes, byteCount - start)))
            }
        }

        /// Makes the iterator.
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(byteCount: byteCount) }
    }
}
