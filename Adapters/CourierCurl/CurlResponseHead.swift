import Courier

/// Builds a response head from the header lines libcurl hands over one at a time.
///
/// libcurl delivers every line of every response the transfer sees, interim `1xx` ones included,
/// each ending in CRLF, and an empty line after each head. A new status line starts a new head.
/// A line that is not a status line, a field or a folded continuation, a field that breaks
/// ``ResponseHeadChecks``' syntax (bare CR, NUL, whitespace before the colon, a name that is not
/// a token), and a head over the `ResponseHeadLimits` end the parse as ``Line/invalid(_:)``: the
/// transfer stops there, so an endless head is never buffered. Pure: tested without a network.
struct CurlResponseHead {
    /// The limits the head is read under.
    let limits: ResponseHeadLimits
    /// The status of the head being read, `nil` before the first status line.
    private(set) var status: Int?
    /// The reason phrase of the status line.
    private(set) var reason = ""
    /// The fields of the head being read, in order, repeated names kept.
    private(set) var fields = HTTPFields()
    /// The bytes of field lines in the head being read (CRLF included).
    private(set) var fieldBytes = 0
    /// The interim heads read so far.
    private(set) var interimCount = 0
    /// Whether the head being read has an HTTP/1.x status line (a body without a length then
    /// ends where the connection closes; over HTTP/2 and 3 it ends with its stream).
    private(set) var isHTTP1 = false

    /// What one line meant.
    enum Line: Equatable {
        /// Part of a head still being read.
        case partial
        /// The empty line that ends an interim (`1xx`) head: keep reading.
        case interimEnd
        /// The empty line that ends a final head.
        case finalEnd(status: Int)
        /// The line breaks a rule or a limit: stop the transfer with this message.
        case invalid(String)
    }

    /// A parser for heads under `limits`.
    init(limits: ResponseHeadLimits = ResponseHeadLimits()) {
        self.limits = limits
    }

    /// Takes one raw line (with or without its CRLF), as text. For tests; libcurl's callback
    /// hands over bytes (see ``take(bytes:)``).
    mutating func take(_ raw: String) -> Line {
        var raw = raw
        return raw.withUTF8 { take(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Takes one raw line (with or without its CRLF) as libcurl delivered it.
    ///
    /// Works on bytes: header names are ASCII tokens and only the value becomes a `String`.
    mutating func take(bytes raw: UnsafeRawBufferPointer) -> Line {
        var end = raw.count
        if end > 0, raw[end - 1] == ASCII.lf { end -= 1 }
        if end > 0, raw[end - 1] == ASCII.cr { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        guard let first = line.first else {
            guard let status else { return .invalid("the response has a header line before its status line") }
            guard (100..<200).contains(status) else { return .finalEnd(status: status) }
            interimCount += 1
            guard interimCount <= limits.maxInterimResponses else {
                return .invalid("the response has more than \(limits.maxInterimResponses) interim (1xx) responses")
            }
            return .interimEnd
        }
        if line.starts(with: ASCII.httpSlash) {
            startHead(statusLine: line)
            return status == nil ? .invalid("the response has a malformed status line") : .partial
        }
        guard status != nil else { return .invalid("the response has a header line before its status line") }
        fieldBytes += raw.count
        guard fieldBytes <= limits.maxBytes else {
            return .invalid("the response head has more than \(limits.maxBytes) bytes of fields")
        }
        if first == ASCII.space || first == ASCII.tab {
            // Obsolete line folding: continues the previous field's value.
            guard let last = fields.indices.last else { return .invalid("the response head starts with a folded line") }
            if let problem = ResponseHeadChecks.fieldValueProblem(line) { return .invalid(problem) }
            let value = fields[last].value + " " + trimmedText(line[...])
            fields[last] = HTTPField(name: fields[last].name, value: value)
            return .partial
        }
        guard let colon = line.firstIndex(of: ASCII.colon) else { return .invalid("a header line has no colon") }
        let valueBytes = line[(colon + 1)...]
        if let problem = ResponseHeadChecks.fieldValueProblem(valueBytes) { return .invalid(problem) }
        let nameBytes = line[..<colon]
        guard let name = KnownFieldNames.name(spelled: nameBytes) ?? HTTPField.Name(String(decoding: nameBytes, as: UTF8.self)) else {
            return .invalid(ResponseHeadChecks.fieldNameProblem(nameBytes) ?? "a header field name is not valid")
        }
        guard fields.count < limits.maxFields else {
            return .invalid("the response head has more than \(limits.maxFields) fields")
        }
        fields.append(HTTPField(name: name, value: trimmedText(valueBytes)))
        return .partial
    }

    /// The head read so far as an `HTTPResponse`, or `nil` before a status line.
    var response: HTTPResponse? {
        guard let status, (100...999).contains(status) else { return nil }
        return HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: fields)
    }

    /// Reads `HTTP/x[.y] SP code [SP reason]`.
    private mutating func startHead(statusLine line: UnsafeRawBufferPointer) {
        fields = HTTPFields()
        // Room for a typical head at once, instead of growing 1, 2, 4, 8 as lines arrive.
        fields.reserveCapacity(8)
        fieldBytes = 0
        status = nil
        reason = ""
        isHTTP1 = line.starts(with: ASCII.http1Slash)
        guard let space = line.firstIndex(of: ASCII.space) else { return }
        var index = space
        while index < line.count, line[index] == ASCII.space { index += 1 }
        var code = 0
        var digits = 0
        while index < line.count, (ASCII.zero...ASCII.nine).contains(line[index]), digits < 4 {
            code = code * 10 + Int(line[index] - ASCII.zero)
            digits += 1
            index += 1
        }
        guard digits == 3, index == line.count || line[index] == ASCII.space, ResponseHeadChecks.fieldValueProblem(line) == nil else {
            return
        }
        status = code
        reason = trimmedText(line[index...])
    }
}

/// Field names servers send on almost every response, made once: a header line whose name is
/// spelled exactly like one of these (in title case or lowercase) reuses it instead of building
/// and checking a new name.
private enum KnownFieldNames {
    static let entries: [(spelling: [UInt8], name: HTTPField.Name)] = {
        let names = [
            "Content-Length", "Content-Type", "Date", "Connection", "Server", "Transfer-Encoding", "Cache-Control", "Keep-Alive",
            "Vary", "ETag", "Last-Modified", "Location", "Set-Cookie", "Content-Encoding",
        ]
        var entries: [(spelling: [UInt8], name: HTTPField.Name)] = []
        for text in names {
            for spelling in [text, text.lowercased()] {
                if let name = HTTPField.Name(spelling) { entries.append((Array(spelling.utf8), name)) }
            }
        }
        return entries
    }()

    /// The known name spelled exactly as `bytes`, if there is one.
    static func name(spelled bytes: Slice<UnsafeRawBufferPointer>) -> HTTPField.Name? {
        for entry in entries where entry.spelling.count == bytes.count && entry.spelling.elementsEqual(bytes) {
            return entry.name
        }
        return nil
    }
}

/// The bytes the parser looks for.
private enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let httpSlash: [UInt8] = Array("HTTP/".utf8)
    static let http1Slash: [UInt8] = Array("HTTP/1.".utf8)
}

/// The text of `bytes` without leading and trailing spaces and tabs (the only whitespace HTTP
/// allows around a value).
private func trimmedText(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
    var lower = bytes.startIndex
    var upper = bytes.endIndex
    while lower < upper, bytes[lower] == ASCII.space || bytes[lower] == ASCII.tab { lower += 1 }
    while upper > lower, bytes[upper - 1] == ASCII.space || bytes[upper - 1] == ASCII.tab { upper -= 1 }
    return String(decoding: bytes[lower..<upper], as: UTF8.self)
}
