import CourierTestSupport

/// Broken HTTP/1.1 responses made from valid ones, reproducible from a seed: what
/// ``FaultServer`` sends at `/mutate/<seed>`.
///
/// Each seed picks one valid response (a `Content-Length` body, a chunked body, a gzip body, JSON,
/// `204`, `100 Continue` then `200`, a `404`) and applies one to three mutations: a
/// flipped byte, a cut, a header line duplicated, dropped, reordered or garbled, a wrong
/// `Content-Length`, a bad chunk size, a coding the body does not have, a bare LF, bytes after the
/// end. The server then closes the connection, with a reset for one seed in eight, so a client
/// never waits for more than what was sent. No template redirects: a flipped byte in a `Location`
/// could name a host that is not the loopback address.
public enum ResponseMutation {
    /// What the server sends for one seed.
    public struct Response: Sendable, Equatable {
        /// The bytes, as sent.
        public var bytes: [UInt8]
        /// Whether the connection ends with a reset (RST) instead of a close (FIN).
        public var reset: Bool
        /// The mutations applied, by name, for a test's message.
        public var mutations: [String]
    }

    /// The response for `seed`.
    public static func response(seed: UInt64) -> Response {
        var random = SeededGenerator(seed: seed)
        var parts = template(&random)
        var applied: [String] = []
        for _ in 0..<(1 + random.below(3)) {
            let mutation = Mutation.allCases[random.below(Mutation.allCases.count)]
            applied.append(mutation.rawValue)
            mutation.apply(to: &parts, &random)
        }
        return Response(bytes: parts.bytes, reset: random.below(8) == 0, mutations: applied)
    }

    /// A response as a head (status line and header lines, without line ends) and the bytes after it.
    struct Parts {
        var lines: [[UInt8]]
        var body: [UInt8]
        /// Set once a byte-level mutation ran: the bytes as they now are, head and body together.
        var raw: [UInt8]?

        var bytes: [UInt8] {
            if let raw { return raw }
            var out: [UInt8] = []
            for line in lines { out += line + [13, 10] }
            return out + [13, 10] + body
        }
    }

    private static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    private static func template(_ random: inout SeededGenerator) -> Parts {
        let letters = text("abcdefghijklmnopqrstuvwxyz ")
        let body = (0..<random.below(2_000)).map { _ in letters[random.below(letters.count)] }
        func fixed(_ status: String, _ headers: [String], _ body: [UInt8]) -> Parts {
            Parts(
                lines: [text(status)] + headers.map(text) + [text("Content-Length: \(body.count)"), text("Connection: close")],
                body: body, raw: nil)
        }
        switch random.below(7) {
        case 0:
            return fixed("HTTP/1.1 200 OK", ["Content-Type: text/plain"], body)
        case 1:
            var chunked: [UInt8] = []
            var rest = body[...]
            while !rest.isEmpty {
                let size = min(rest.count, 1 + random.below(700))
                chunked += text(String(size, radix: 16) + "\r\n") + rest.prefix(size) + [13, 10]
                rest = rest.dropFirst(size)
            }
            chunked += text("0\r\n\r\n")
            return Parts(
                lines: [
                    text("HTTP/1.1 200 OK"), text("Content-Type: text/plain"), text("Transfer-Encoding: chunked"),
                    text("Connection: close"),
                ],
                body: chunked, raw: nil)
        case 2:
            return fixed("HTTP/1.1 200 OK", ["Content-Type: text/plain", "Content-Encoding: gzip"], TestCompression.compress(body, .gzip))
        case 3:
            return fixed("HTTP/1.1 200 OK", ["Content-Type: application/json"], text(#"{"ok":true,"size":\#(body.count)}"#))
        case 4:
            return Parts(lines: [text("HTTP/1.1 204 No Content"), text("Connection: close")], body: [], raw: nil)
        case 5:
            var parts = fixed("HTTP/1.1 200 OK", ["Content-Type: text/plain"], body)
            parts.lines[0] = text("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK")
            return parts
        default:
            return fixed("HTTP/1.1 404 Not Found", ["Content-Type: text/plain"], text("no such thing"))
        }
    }

    /// One way of breaking a response.
    private enum Mutation: String, CaseIterable {
        case flipByte = "flip-byte"
        case cut
        case duplicateHeader = "duplicate-header"
        case dropHeader = "drop-header"
        case reorderHeaders = "reorder-headers"
        case garbleHeader = "garble-header"
        case wrongLength = "wrong-length"
        case badChunkSize = "bad-chunk-size"
        case wrongCoding = "wrong-coding"
        case bareLF = "bare-lf"
        case trailingBytes = "trailing-bytes"

        func apply(to parts: inout Parts, _ random: inout SeededGenerator) {
            // Header mutations work on the lines while the bytes are still whole.
            if parts.raw == nil, parts.lines.count > 1 {
                let header = 1 + random.below(parts.lines.count - 1)
                switch self {
                case .duplicateHeader:
                    parts.lines.insert(parts.lines[header], at: header)
                    return
                case .dropHeader:
                    parts.lines.remove(at: header)
                    return
                case .reorderHeaders:
                    let head = parts.lines[0]
                    var rest = Array(parts.lines.dropFirst())
                    for index in rest.indices.reversed() { rest.swapAt(index, random.below(index + 1)) }
                    parts.lines = [head] + rest
                    return
                case .garbleHeader:
                    let garbage: [[UInt8]] = [
                        text("no colon here"), text("X-Nul: a\u{0}b"), text("X-Ctl: a\u{1}b"), text(" folded continuation"),
                        text("X (bad): name"), text(": empty name"), text("X-Long: " + String(repeating: "v", count: 9_000)),
                    ]
                    parts.lines.insert(garbage[random.below(garbage.count)], at: header)
                    return
                case .wrongLength:
                    let lengths = ["0", "1", "\(parts.body.count + 1 + random.below(5_000))", "-5", "12abc", "99999999999999999999", ""]
                    let value = lengths[random.below(lengths.count)]
                    if let index = parts.lines.firstIndex(where: { $0.starts(with: text("Content-Length:")) }) {
                        parts.lines[index] = text("Content-Length: " + value)
                    } else {
                        parts.lines.insert(text("Content-Length: " + value), at: header)
                    }
                    return
                case .wrongCoding:
                    let codings = ["gzip", "deflate", "br", "gzip, gzip", "identity, gzip", "x-unknown"]
                    parts.lines.insert(text("Content-Encoding: " + codings[random.below(codings.count)]), at: header)
                    return
                case .badChunkSize:
                    if parts.lines.contains(text("Transfer-Encoding: chunked")) {
                        let sizes = ["zz", "-1", "ffffffffffffffffffff", "7fffffffffffffff", "", "1;ext=\"unterminated"]
                        if let end = parts.body.firstIndex(of: 13) {
                            parts.body.replaceSubrange(..<end, with: text(sizes[random.below(sizes.count)]))
                        }
                    } else {
                        parts.lines.insert(text("Transfer-Encoding: chunked"), at: header)
                    }
                    return
                case .flipByte, .cut, .bareLF, .trailingBytes:
                    break
                }
            }
            // Byte mutations: on the bytes as they would be sent.
            var bytes = parts.bytes
            switch self {
            case .flipByte:
                if !bytes.isEmpty { bytes[random.below(bytes.count)] ^= UInt8(1 + random.below(255)) }
            case .cut:
                if bytes.count > 1 { bytes.removeLast(1 + random.below(bytes.count - 1)) }
            case .bareLF:
                if let index = bytes.indices.dropLast().filter({ bytes[$0] == 13 && bytes[$0 + 1] == 10 }).randomElement(using: &random) {
                    bytes.remove(at: index)
                }
            case .trailingBytes:
                let extras = [text("HTTP/1.1 200 OK\r\n\r\n"), text("garbage"), [UInt8](repeating: 0, count: 16)]
                bytes += extras[random.below(extras.count)]
            default:
                break
            }
            parts.raw = bytes
        }
    }
}
