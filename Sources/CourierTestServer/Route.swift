import CourierTestSupport
import Foundation
import Synchronization

/// What the server does for one request; chosen by ``Route/resolve(method:uri:headers:body:bodyLength:)``
/// without I/O, then carried out by the channel handler.
enum ServerAction {
    /// A complete response.
    case respond(status: Int, headers: [(String, String)], body: [UInt8])
    /// Wait, then do the next action.
    case delay(milliseconds: Int64, then: Box)
    /// Wait until the test opens the gate `name` (see ``HoldGates``), then do the next action.
    case hold(name: String, then: Box)
    /// `count` bytes of `x` with a Content-Length, written in 64 KiB pieces.
    case bytes(count: Int)
    /// `count` bytes of ``PatternBody``, each block written once the previous one has gone out.
    case pattern(count: Int)
    /// A head, the first `after` bytes of `body`, then the connection closed (a download cut off).
    case cut(status: Int, headers: [(String, String)], body: [UInt8], after: Int)
    /// A chunked body: `chunks` chunks of `size` bytes, one every `delayMilliseconds`; with a
    /// `gate`, the chunks after the first wait until the test opens it (see ``HoldGates``).
    case stream(chunks: Int, size: Int, delayMilliseconds: Int64, gate: String?)
    /// A head with a Content-Length, flushed on its own; the body `delayMilliseconds` later, in a
    /// second write (a server that writes the head and the body separately).
    case split(headers: [(String, String)], body: [UInt8], delayMilliseconds: Int64)

    /// Indirection for the recursive `delay` case.
    final class Box {
        let action: ServerAction
        init(_ action: ServerAction) { self.action = action }
    }
}

/// The request counters of `/tail/{every}`: one across the process, and one per `key`.
enum TailLatency {
    private static let counter = Atomic<Int>(0)
    private static let keyed = Mutex<[String: Int]>([:])

    /// Whether this request is one of the slow ones: every `every`-th across the process, or, with
    /// a `key`, the first of that key's requests and every `every`-th after it.
    static func next(every: Int, key: String?) -> Bool {
        guard let key else { return counter.wrappingAdd(1, ordering: .relaxed).newValue % every == 0 }
        let count: Int = keyed.withLock { table in
            if table[key] == nil, table.count >= 1000 { table.removeAll() }  // keys are per test: a bound, not a cache
            table[key, default: 0] += 1
            return table[key] ?? 1
        }
        return (count - 1) % every == 0
    }
}

/// How many requests each `/download/{key}` has had (keys are per test).
enum DownloadRequests {
    private static let counts = Mutex<[String: Int]>([:])

    /// Counts a request for `key` and returns its number, from 1.
    static func next(_ key: String) -> Int {
        counts.withLock { table in
            if table[key] == nil, table.count >= 1000 { table.removeAll() }
            table[key, default: 0] += 1
            return table[key] ?? 1
        }
    }
}

/// The routing table.
enum Route {
    /// The most bytes one generated response may have (1 GiB): a bad test cannot exhaust memory.
    static let maxGeneratedBytes = 1 << 30

    static func resolve(method: String, uri: String, headers: [(String, String)], body: [UInt8], bodyLength: Int) -> ServerAction {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts.first ?? "/")
        let rawQuery = parts.count == 2 ? String(parts[1]) : ""
        let query = decodeQuery(rawQuery)
        let segments = path.split(separator: "/").map(String.init)
        func number(_ index: Int) -> Int? { segments.count > index ? Int(segments[index]) : nil }
        func queryValue(_ name: String) -> String? { query.first { $0[0] == name }?[1] }

        switch segments.first {
        case "echo":
            let echo = EchoResponse(
                method: method, path: path, rawQuery: rawQuery, query: query, headers: headers.map { [$0.0, $0.1] },
                body: String(decoding: body, as: UTF8.self), bodyLength: bodyLength
            )
            return json(echo)
        case "challenge":
            // `/challenge?www=v1&www=v2`: a 401 with one `WWW-Authenticate` line per value.
            let values = query.filter { $0[0] == "www" }.map { $0[1] }
            guard !values.isEmpty else { return text(400, "challenge needs a www value") }
            return .respond(
                status: 401, headers: values.map { ("WWW-Authenticate", $0) } + [("Content-Type", "application/json")],
                body: Array(#"{"status":401}"#.utf8))
        case "status":
            guard let code = number(1), (100...599).contains(code) else { return text(400, "status must be 100 to 599") }
            let contentType = queryValue("contentType") ?? "application/json"
            let bodyText = queryValue("body") ?? "{\"status\":\(code)}"
            let noBody = code == 204 || code == 304 || code < 200
            return .respond(status: code, headers: noBody ? [] : [("Content-Type", contentType)], body: noBody ? [] : Array(bodyText.utf8))
        case "delay":
            guard let milliseconds = number(1), (0...600_000).contains(milliseconds) else {
                return text(400, "delay must be 0 to 600000 ms")
            }
            return .delay(milliseconds: Int64(milliseconds), then: .init(text(200, "delayed \(milliseconds) ms")))
        case "hold":
            guard segments.count == 2 else { return text(400, "hold needs a gate name: /hold/{name}") }
            return .hold(name: segments[1], then: .init(text(200, "released \(segments[1])")))
        case "bytes":
            guard let count = number(1), (0...maxGeneratedBytes).contains(count) else { return text(400, "bytes must be 0 to 1 GiB") }
            return .bytes(count: count)
        case "pattern":
            guard let count = number(1), (0...maxGeneratedBytes).contains(count) else {
                return text(400, "pattern must be 0 to 1 GiB")
            }
            return .pattern(count: count)
        case "stream":
            guard let chunks = number(1), (1...100_000).contains(chunks) else { return text(400, "chunks must be 1 to 100000") }
            let size = Int(queryValue("size") ?? "") ?? 1024
            let delay = Int64(queryValue("delayMs") ?? "") ?? 0
            guard (1...(1 << 20)).contains(size), chunks * size <= maxGeneratedBytes, (0...10_000).contains(delay) else {
                return text(400, "size must be 1 to 1 MiB, delayMs 0 to 10000")
            }
            return .stream(chunks: chunks, size: size, delayMilliseconds: delay, gate: queryValue("gate"))
        case "shaped":
            return shaped(count: number(1), lines: queryValue("lines"), splitMs: queryValue("splitMs"))
        case "redirect":
            guard let hops = number(1), (0...100).contains(hops) else { return text(400, "redirect count must be 0 to 100") }
            let location = hops <= 1 ? "/echo" : "/redirect/\(hops - 1)"
            if hops == 0 { return resolve(method: method, uri: "/echo", headers: headers, body: body, bodyLength: bodyLength) }
            return .respond(status: 302, headers: [("Location", location), ("Content-Length", "0")], body: [])
        case "redirect-to":
            guard let target = queryValue("url") else { return text(400, "url is required") }
            let status = Int(queryValue("status") ?? "") ?? 302
            let control = queryValue("cc").map { [("Cache-Control", $0)] } ?? []
            let cookie = queryValue("setCookie").map { [("Set-Cookie", $0)] } ?? []
            return .respond(status: status, headers: [("Location", target)] + control + cookie, body: [])
        case "calculator.asmx":
            return CalculatorService.respond(method: method, headers: headers, body: body)
        case "xml":
            // An XML document of about `bytes` bytes (a catalogue of hotels), for decoding tests and benchmarks.
            let size = Int(queryValue("bytes") ?? "") ?? 1024
            guard (0...(64 << 20)).contains(size) else { return text(400, "bytes must be 0 to 64 MiB") }
            return .respond(
                status: 200, headers: [("Content-Type", queryValue("contentType") ?? "application/xml")],
                body: Array(SampleDocuments.hotelsXML(approximateBytes: size).utf8))
        case "gzip-xml":
            // `<item><name>pen</name><count>3</count></item>` with `Content-Encoding: gzip`.
            return .respond(
                status: 200, headers: [("Content-Type", "application/xml"), ("Content-Encoding", "gzip")],
                body: Array(Data(base64Encoded: gzippedItemXML) ?? Data()))
        case "cacheable":
            guard segments.count == 2 else { return text(400, "cacheable needs a name: /cacheable/{name}") }
            return cacheable(name: segments[1], method: method, headers: headers, query: query)
        case "expect":
            return expectation(method: method, headers: headers, body: body, bodyLength: bodyLength, query: query)
        case "tail":
            // A slow tail: every `every`-th request to this route (counted across the process, or per
            // `key`, first request included) waits `ms` before its answer; the rest answer at once.
            guard let every = number(1), (2...10_000).contains(every) else { return text(400, "tail needs 2 to 10000: /tail/{every}") }
            let milliseconds = Int64(queryValue("ms") ?? "") ?? 50
            guard (0...10_000).contains(milliseconds) else { return text(400, "ms must be 0 to 10000") }
            let answer = text(200, "tail")
            let slow = TailLatency.next(every: every, key: queryValue("key"))
            return slow ? .delay(milliseconds: milliseconds, then: .init(answer)) : answer
        case "inventory":
            return InventoryService.resolve(method: method, segments: segments, query: query, body: body)
        case "headers":
            return .respond(status: 200, headers: query.map { ($0[0], $0[1]) } + [("Content-Type", "text/plain")], body: Array("ok".utf8))
        case "events":
            return events(headers: headers, query: query)
        case "download":
            guard segments.count == 2 else { return text(400, "download needs a key: /download/{key}") }
            return download(key: segments[1], headers: headers, query: query)
        case "jsonl":
            // `count` records `{"n":i}`, one per line, with a CRLF, a blank line and no final LF
            // among them (unless `plain=1`); `bad=k` makes record k not JSON (record k is on line k, or k + 1 after
            // the blank line that follows record 2).
            guard let count = Int(queryValue("count") ?? "3"), (0...100_000).contains(count) else {
                return text(400, "count must be 0 to 100000")
            }
            // `plain=1`: every record ends with one LF, nothing else.
            let bad = Int(queryValue("bad") ?? "")
            let plain = queryValue("plain") != nil
            var body = ""
            for index in 1...max(1, count) where count > 0 {
                body += index == bad ? "{not json" : "{\"n\":\(index)}"
                body += plain ? "\n" : index == 2 ? "\r\n\n" : (index == count ? "" : "\n")
            }
            return .respond(status: 200, headers: [("Content-Type", "application/jsonl")], body: Array(body.utf8))
        default:
            return text(404, "no route for \(path)")
        }
    }

    /// `/shaped/{bytes}?lines=N&splitMs=M`: `bytes` bytes of `x` after `N` extra header lines
    /// (`X-Filler-i`, 0 by default, at most 90), the head and the body in one write, or, with
    /// `splitMs`, the body in a second write `M` milliseconds after the head (0 to 10000): the
    /// answer shapes real servers write, for `courier-bench count --server`.
    static func shaped(count: Int?, lines: String?, splitMs: String?) -> ServerAction {
        guard let count, (0...(1 << 20)).contains(count) else { return text(400, "shaped needs 0 to 1 MiB: /shaped/{bytes}") }
        // (At most 90: with its own fields the head stays under a client's default 100 fields.)
        guard let lines = Int(lines ?? "0"), (0...90).contains(lines) else { return text(400, "lines must be 0 to 90") }
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream")]
        for index in 0..<lines { headers.append(("X-Filler-\(index)", "value-\(index)-of-a-typical-length")) }
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: count)
        guard let splitMs else { return .respond(status: 200, headers: headers, body: body) }
        guard let delay = Int64(splitMs), (0...10_000).contains(delay) else { return text(400, "splitMs must be 0 to 10000") }
        return .split(headers: headers, body: body, delayMilliseconds: delay)
    }

    /// `/events?total=N&per=M&retry=MS`: a `text/event-stream` of the events after the request's
    /// `Last-Event-ID` (0 when none), at most `per` of them, then the end of the body; once all
    /// `total` were sent, `204 No Content`. Each event has `id: i`, `event: tick` and two `data`
    /// lines (`{"n":i}` and `end`); the stream starts with a comment and `retry: MS` (0 by default).
    /// The `Last-Event-ID` each request sent is in the `X-Last-Event-ID` answer header.
    static func events(headers: [(String, String)], query: [[String]]) -> ServerAction {
        func queryValue(_ key: String) -> String? { query.first { $0[0] == key }?[1] }
        guard let total = Int(queryValue("total") ?? "3"), (0...10_000).contains(total),
            let per = Int(queryValue("per") ?? "100"), (1...10_000).contains(per),
            let retry = Int(queryValue("retry") ?? "0"), (0...60_000).contains(retry)
        else { return text(400, "total 0 to 10000, per 1 to 10000, retry 0 to 60000") }
        let last = headers.first { $0.0.lowercased() == "last-event-id" }?.1
        let after = Int(last ?? "0") ?? 0
        guard after < total else { return .respond(status: 204, headers: [], body: []) }
        var body = ": courier test stream\nretry: \(retry)\n\n"
        for index in (after + 1)...min(total, after + per) {
            body += "id: \(index)\nevent: tick\ndata: {\"n\":\(index)}\ndata: end\n\n"
        }
        return .respond(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Last-Event-ID", last ?? ""),
            ],
            body: Array(body.utf8))
    }

    /// `/download/{key}?bytes=N&cutAt=M&changeAfterCut=1&noRange=1`: `N` bytes of ``PatternBody``
    /// with a strong `ETag` and `Accept-Ranges: bytes`. The key's first request is cut off after
    /// `M` bytes (the connection closes). A `Range: bytes=S-` whose `If-Range` matches the ETag gets
    /// `206` with the rest; `changeAfterCut` gives later requests another ETag (so `If-Range` fails
    /// and the whole body comes again); `noRange` ignores `Range`. Each request's `Range` is in the
    /// `X-Range-Seen` answer header.
    static func download(key: String, headers: [(String, String)], query: [[String]]) -> ServerAction {
        func queryValue(_ name: String) -> String? { query.first { $0[0] == name }?[1] }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name }?.1 }
        guard let total = Int(queryValue("bytes") ?? "100000"), (1...(64 << 20)).contains(total) else {
            return text(400, "bytes must be 1 to 64 MiB")
        }
        let seen = DownloadRequests.next(key)
        let cutAt = Int(queryValue("cutAt") ?? "")
        let version = queryValue("changeAfterCut") != nil && seen > 1 ? 2 : 1
        let tag = "\"\(key)-v\(version)\""
        var fields: [(String, String)] = [
            ("Content-Type", "application/octet-stream"), ("ETag", tag), ("X-Range-Seen", header("range") ?? ""),
        ]
        let ranges = queryValue("noRange") == nil
        if ranges { fields.append(("Accept-Ranges", "bytes")) }
        if ranges, let range = header("range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst("bytes=".count).dropLast()), (0..<total).contains(start),
            header("if-range").map({ $0 == tag }) ?? true
        {
            fields.append(("Content-Range", "bytes \(start)-\(total - 1)/\(total)"))
            return .respond(status: 206, headers: fields, body: PatternBody.bytes(in: start..<total))
        }
        let body = PatternBody.bytes(in: 0..<total)
        if seen == 1, let cutAt, (1..<total).contains(cutAt) {
            return .cut(status: 200, headers: fields + [("Content-Length", String(total))], body: body, after: cutAt)
        }
        return .respond(status: 200, headers: fields, body: body)
    }

    /// `/cacheable/{name}?cc=…&lastModified=…&vary=…&noETag=1&bytes=N`: an entity for cache tests, with no
    /// state on the server. Its version is the request's `X-Version` (1 by default): the ETag is
    /// `"{name}-v{version}"` and the body `{name} v{version}`, followed by ` for {value}` of the
    /// field `vary` names. `If-None-Match` with the current ETag (or, without an ETag,
    /// `If-Modified-Since` equal to `lastModified`) gets a `304`. `X-Status: 503` answers that status
    /// instead. No `Date` is sent, so a client's clock alone ages the response.
    static func cacheable(name: String, method: String, headers: [(String, String)], query: [[String]]) -> ServerAction {
        func header(_ field: String) -> String? { headers.first { $0.0.lowercased() == field }?.1 }
        func queryValue(_ key: String) -> String? { query.first { $0[0] == key }?[1] }
        if let failing = header("x-status").flatMap({ Int($0) }), (300...599).contains(failing) {
            return text(failing, "failing with \(failing)")
        }
        let version = header("x-version") ?? "1"
        let tag = queryValue("noETag") == nil ? "\"\(name)-v\(version)\"" : nil
        var fields: [(String, String)] = []
        if let control = queryValue("cc") { fields.append(("Cache-Control", control)) }
        if let tag { fields.append(("ETag", tag)) }
        let modified = queryValue("lastModified")
        if let modified { fields.append(("Last-Modified", modified)) }
        var body = "\(name) v\(version)"
        if let size = queryValue("bytes").flatMap({ Int($0) }), (0...(16 << 20)).contains(size) {
            // Padded to `size` bytes, for bodies that stream in many chunks.
            body += String(repeating: ".", count: max(0, size - body.utf8.count))
        }
        if let vary = queryValue("vary") {
            fields.append(("Vary", vary))
            body += " for \(header(vary.lowercased()) ?? "-")"
        }
        let unchanged =
            if let tag { header("if-none-match") == tag } else { modified != nil && header("if-modified-since") == modified }
        if unchanged, method == "GET" || method == "HEAD" { return .respond(status: 304, headers: fields, body: []) }
        return .respond(status: 200, headers: fields + [("Content-Type", "text/plain")], body: Array(body.utf8))
    }

    /// `/expect?method=PUT&header=Name:value&bodyLength=N&bodyPrefix=text`: 200 when the request has
    /// every named property (each `header` item is one header that must be present with that value),
    /// 422 naming the first one that differs. Lets a load tool's requests be checked by their status.
    static func expectation(
        method: String, headers: [(String, String)], body: [UInt8], bodyLength: Int, query: [[String]]
    ) -> ServerAction {
        for item in query {
            let (name, expected) = (item[0], item[1])
            switch name {
            case "method" where method != expected:
                return text(422, "method is \(method), expected \(expected)")
            case "header":
                guard let colon = expected.firstIndex(of: ":") else { return text(400, "header takes Name:value") }
                let field = expected[..<colon].lowercased()
                let value = expected[expected.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                guard headers.contains(where: { $0.0.lowercased() == field && $0.1 == value }) else {
                    let seen = headers.filter { $0.0.lowercased() == field }.map(\.1)
                    return text(422, "header \(field) is \(seen), expected \(value)")
                }
            case "bodyLength" where String(bodyLength) != expected:
                return text(422, "body length is \(bodyLength), expected \(expected)")
            case "bodyPrefix" where !body.starts(with: Array(expected.utf8)):
                return text(422, "body does not start with \(expected)")
            default:
                continue
            }
        }
        return text(200, "as expected")
    }

    /// A gzip stream (made with Python's `gzip.compress`, mtime 0) of a small XML item.
    static let gzippedItemXML = "H4sIAAAAAAACA7Oxr8jNUShLLSrOzM+zVTLUM1Cyt7PJLEnNtbPJS8xNtStIzbPRB7NskvNL80rsjG30IQwbfbAyAIzl6TFCAAAA"

    static func decodeQuery(_ raw: String) -> [[String]] {
        guard !raw.isEmpty else { return [] }
        return raw.split(separator: "&").map { pair in
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            return [decode(halves[0]), halves.count == 2 ? decode(halves[1]) : ""]
        }
    }

    static func text(_ status: Int, _ message: String) -> ServerAction {
        .respond(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(message.utf8))
    }

    static func json(_ value: some Encodable, status: Int = 200) -> ServerAction {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return text(500, "could not encode the echo") }
        return .respond(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
    }
}
