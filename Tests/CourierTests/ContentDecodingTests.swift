import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Content decoding: codings parsed, gzip and deflate undone under the limits, without I/O")
struct ContentDecodingTests {
    static let text = Array(String(repeating: "Courier decodes this body. ", count: 1600).utf8)
    static let limits = DecodedBody.Limits(maxBytes: 16 << 20, maxRatio: 100)

    /// A body that arrives in chunks of `size` bytes.
    static func streamed(_ bytes: [UInt8], chunk size: Int) -> ResponseBody {
        let chunks = stride(from: 0, to: bytes.count, by: size).map { Data(bytes[$0..<min($0 + size, bytes.count)]) }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()
        return ResponseBody(stream: stream, expectedLength: Int64(bytes.count))
    }

    static func decode(_ body: ResponseBody, _ codings: [ContentCoding], limits: DecodedBody.Limits = limits) async throws -> Data {
        try await DecodedBody.decode(body, codings: codings, names: "test", limits: limits).collect(upTo: Int.max)
    }

    @Test(
        "Content-Encoding lists: order undone last first, identity skipped, unknown and too many refused",
        arguments: [
            (["gzip"], [ContentCoding.gzip], true), (["x-gzip"], [.gzip], true), (["deflate, gzip"], [.gzip, .deflate], true),
            (["gzip", "deflate"], [.deflate, .gzip], true), (["identity"], [], true), ([" GZIP "], [.gzip], true),
            (["br"], [], false), (["gzip, compress"], [], false), (["gzip, gzip, gzip"], [], false),
        ] as [([String], [ContentCoding], Bool)]
    )
    func codings(values: [String], order: [ContentCoding], valid: Bool) {
        var fields = HTTPFields()
        for value in values { fields.append(HTTPField(name: .contentEncoding, value: value)) }
        do {
            let parsed = try ContentCoding.decodingOrder(of: fields, maxCodings: 2)
            #expect(valid)
            #expect(parsed == order)
        } catch {
            #expect(!valid)
            #expect(error.kind == .decoding)
        }
    }

    @Test("gzip, zlib and raw deflate decode in memory and byte by byte", arguments: [1, 7, 4096, 1 << 20])
    func formats(chunk: Int) async throws {
        for (format, coding) in [(TestCompression.Format.gzip, ContentCoding.gzip), (.zlib, .deflate), (.rawDeflate, .deflate)] {
            let encoded = TestCompression.compress(Self.text, format)
            #expect(Array(try await Self.decode(ResponseBody(data: Data(encoded)), [coding])) == Self.text)
            #expect(Array(try await Self.decode(Self.streamed(encoded, chunk: chunk), [coding])) == Self.text)
        }
    }

    @Test("two gzip members in a row are one body; two codings chained undo in order")
    func membersAndChains() async throws {
        let member = TestCompression.compress(Self.text, .gzip)
        #expect(Array(try await Self.decode(ResponseBody(data: Data(member + member)), [.gzip])) == Self.text + Self.text)
        let twice = TestCompression.compress(TestCompression.compress(Self.text, .zlib), .gzip)
        #expect(Array(try await Self.decode(Self.streamed(twice, chunk: 100), [.gzip, .deflate])) == Self.text)
    }

    @Test("truncated, corrupt, trailing bytes after deflate, and a lone byte all fail as decoding")
    func broken() async throws {
        let gzip = TestCompression.compress(Self.text, .gzip)
        let zlib = TestCompression.compress(Self.text, .zlib)
        var corrupt = gzip
        for index in 100..<160 { corrupt[index] ^= 0x5A }
        let cases: [([UInt8], ContentCoding)] = [
            (Array(gzip.dropLast(8)), .gzip), (Array(gzip.prefix(10)), .gzip), (corrupt, .gzip), (zlib + [1, 2, 3], .deflate),
            ([0x78], .deflate), (gzip + [0, 0, 0], .gzip),
        ]
        for (bytes, coding) in cases {
            for body in [ResponseBody(data: Data(bytes)), Self.streamed(bytes, chunk: 33)] {
                await #expect(throws: NetworkError.self) { _ = try await Self.decode(body, [coding]) }
                do {
                    _ = try await Self.decode(body, [coding])
                } catch let error as NetworkError {
                    #expect(error.kind == .decoding, "\(error)")
                }
            }
        }
    }

    @Test("an empty body with a Content-Encoding is an empty body")
    func empty() async throws {
        #expect(try await Self.decode(ResponseBody(data: Data()), [.gzip]).isEmpty)
    }

    @Test("a bomb fails at the cap and at the ratio, reading at most one chunk past either")
    func bomb() async throws {
        let zeros = TestCompression.compress([UInt8](repeating: 0, count: 16 << 20), .gzip)
        let capped = DecodedBody.Limits(maxBytes: 4 << 20, maxRatio: 100_000)
        await #expect(throws: NetworkError.self) { _ = try await Self.decode(Self.streamed(zeros, chunk: 4096), [.gzip], limits: capped) }
        let ratio = DecodedBody.Limits(maxBytes: 64 << 20, maxRatio: 100)
        do {
            _ = try await Self.decode(ResponseBody(data: Data(zeros)), [.gzip], limits: ratio)
            Issue.record("the bomb decoded")
        } catch let error as NetworkError {
            #expect(error.kind == .responseTooLarge)
            #expect(error.message.contains("100 times"))
        }
        // One read never returns more than a chunk, however well the input compresses.
        let reader = DecodedBody(ResponseBody(data: Data(zeros)), codings: [.gzip], names: "gzip", limits: ratio)
        let first = try await reader.next()
        #expect((first?.count ?? 0) <= DecodedBody.chunkBytes + 64 * 1024)
    }

    @Test("the client advertises gzip and deflate unless decoding is off or the transport decodes itself")
    func advertising() {
        struct Decoding: Transport {
            var name: String { "decoding" }
            var decodesContentCodings: Bool { true }
            func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
                TransportResponse(head: HTTPResponse(status: .ok), body: .empty)
            }
            func shutdown() async {}
        }
        struct Plain: Transport {
            var name: String { "plain" }
            func send(_ request: HTTPRequest, body: RequestBody?, context: RequestContext) async throws -> TransportResponse {
                TransportResponse(head: HTTPResponse(status: .ok), body: .empty)
            }
            func shutdown() async {}
        }
        #expect(BridgeLink.advertises(Decompression(), transport: Plain()))
        #expect(!BridgeLink.advertises(Decompression(isEnabled: false), transport: Plain()))
        #expect(!BridgeLink.advertises(Decompression(), transport: Decoding()))
    }
}
