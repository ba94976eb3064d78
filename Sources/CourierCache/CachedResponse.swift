import CZlib
import Courier
import Foundation
import HTTPTypes

/// One response as a ``CacheStore`` holds it: the head, the whole body, when it was received, and
/// the request fields it was chosen by (its `Vary`).
///
/// Stores keep it whole and hand it back unchanged; ``encoded()`` and ``init(encoded:)`` give a
/// checked byte form for stores that write it somewhere.
public struct CachedResponse: Sendable, Hashable {
    /// The key it is stored under (method, URL, and a fingerprint of the request's credentials).
    public let key: String
    /// The status code.
    public let status: Int
    /// The response's header fields, as received (a `304` later updates them).
    public let headerFields: HTTPFields
    /// The whole body, already decoded from any content coding.
    public let body: Data
    /// When the request that fetched it (or last revalidated it) was sent, in seconds since 1970.
    public let requestTime: Int64
    /// When that response arrived, in seconds since 1970.
    public let responseTime: Int64
    /// The request fields named by the response's `Vary`, with the values they had.
    let vary: VaryKey?
    /// Its freshness information (RFC 9111 §4.2), read from the head once, when it is made: a hit
    /// parses no header.
    let freshness: StoredFreshness

    init(
        key: String, status: Int, headerFields: HTTPFields, body: Data, requestTime: Int64, responseTime: Int64, vary: VaryKey?
    ) {
        self.key = key
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.vary = vary
        freshness = StoredFreshness(status: status, fields: headerFields, requestTime: requestTime, responseTime: responseTime)
    }

    /// This response with a `304`'s header fields and times (the body stays).
    func revalidated(headerFields: HTTPFields, requestTime: Int64, responseTime: Int64) -> CachedResponse {
        CachedResponse(
            key: key, status: status, headerFields: headerFields, body: body, requestTime: requestTime, responseTime: responseTime,
            vary: vary)
    }

    /// Bytes it costs a store: the body and the header fields.
    public var size: Int {
        body.count + headerFields.reduce(key.utf8.count) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
    }
}

extension CachedResponse {
    /// The fields of the byte form, before the body.
    private struct Metadata: Codable {
        var key: String
        var status: Int
        var fields: [[String]]
        var requestTime: Int64
        var responseTime: Int64
        var varyNames: [String]?
        var varyValues: [String?]?
        var bodyLength: Int
    }

    /// The first bytes of the byte form, and its version. `CRE3`: `Vary` values are fingerprints;
    /// `CRE2` entries held them in clear, so they no longer load, and a store removes them when it
    /// reads them.
    private static let magic = Array("CRE3".utf8)
    /// The most metadata bytes a valid entry has (its header fields are bounded by the response
    /// head limits long before this).
    private static let maxMetadataBytes = 4 << 20

    /// The byte form: a magic number, the metadata as JSON with its length, the body, and a CRC-32
    /// (zlib's) of everything before it, so a truncated or altered entry is recognised
    /// (``init(encoded:)`` returns `nil`) instead of being served.
    public func encoded() -> Data {
        let metadata = Metadata(
            key: key, status: status, fields: headerFields.map { [$0.name.rawName, $0.value] }, requestTime: requestTime,
            responseTime: responseTime, varyNames: vary?.names, varyValues: vary?.values, bodyLength: body.count)
        let json = (try? JSONEncoder().encode(metadata)) ?? Data()
        var data = Data(Self.magic)
        data.reserveCapacity(4 + 4 + json.count + body.count + 4)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(json)
        data.append(body)
        let crc = data.withUnsafeBytes { Self.crc32($0) }
        withUnsafeBytes(of: crc.littleEndian) { data.append(contentsOf: $0) }
        return data
    }

    /// Reads the byte form; `nil` when it is not one, or is truncated or altered.
    /// - Parameter data: What ``encoded()`` wrote.
    public init?(encoded data: Data) {
        let parsed: (metadata: Metadata, bodyRange: Range<Int>)? = data.withUnsafeBytes { raw in
            guard raw.count >= 12, raw.prefix(4).elementsEqual(Self.magic) else { return nil }
            let metadataLength = Int(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
            guard metadataLength <= Self.maxMetadataBytes, raw.count >= 8 + metadataLength + 4 else { return nil }
            let checksumStart = raw.count - 4
            let stored = raw.loadUnaligned(fromByteOffset: checksumStart, as: UInt32.self).littleEndian
            guard stored == Self.crc32(UnsafeRawBufferPointer(rebasing: raw[..<checksumStart])) else { return nil }
            let json = Data(UnsafeRawBufferPointer(rebasing: raw[8..<(8 + metadataLength)]))
            guard let metadata = try? JSONDecoder().decode(Metadata.self, from: json),
                metadata.bodyLength == checksumStart - 8 - metadataLength
            else { return nil }
            return (metadata, (8 + metadataLength)..<checksumStart)
        }
        guard let (metadata, bodyRange) = parsed, (100...999).contains(metadata.status) else { return nil }
        var fields = HTTPFields()
        for pair in metadata.fields {
            guard pair.count == 2, let name = HTTPField.Name(pair[0]), HTTPField.isValidValue(pair[1]) else { return nil }
            fields.append(HTTPField(name: name, value: pair[1]))
        }
        var vary: VaryKey?
        if let names = metadata.varyNames, let values = metadata.varyValues {
            guard names.count == values.count else { return nil }
            vary = VaryKey(names: names, values: values)
        }
        let start = data.startIndex
        self.init(
            key: metadata.key, status: metadata.status, headerFields: fields,
            body: Data(data[(start + bodyRange.lowerBound)..<(start + bodyRange.upperBound)]),
            requestTime: metadata.requestTime, responseTime: metadata.responseTime, vary: vary)
    }

    /// zlib's CRC-32 of `bytes`.
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CZlib.crc32(0, nil, 0)
        var rest = bytes
        while !rest.isEmpty {
            let piece = UnsafeRawBufferPointer(rebasing: rest.prefix(1 << 30))
            crc = CZlib.crc32(crc, piece.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(piece.count))
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(piece.count))
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// 64-bit FNV-1a, for short texts (a key's file name, a credentials fingerprint).
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
