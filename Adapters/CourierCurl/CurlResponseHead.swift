import Courier

/// Builds a response head from the header lines libcurl hands over one at a time.
///
/// libcurl delivers every line of every response the transfer sees, interim `1xx` ones included,
/// each ending in CRLF, and an empty line after each head. A new status line starts a new head.
/// Pure: tested without a network.
struct CurlResponseHead {
    /// The status of the head being read, `nil` before the first status line.
    private(set) var status: Int?
    /// The reason phrase of the status line.
    private(set) var reason = ""
    /// The fields of the head being read, in order, repeated names kept.
    private(set) var fields = HTTPFields()
    /// Lines that were not valid fields (skipped, counted for diagnostics).
    private(set) var skippedLines = 0

    /// What one line meant.
    enum Line: Equatable {
        /// Part of a head still being read.
        case partial
        /// The empty line that ends an interim (`1xx`) head: keep reading.
        case interimEnd
        /// The empty line that ends a final head.
        case finalEnd(status: Int)
    }

    /// Takes one raw line (with or without its CRLF).
    mutating func take(_ raw: String) -> Line {
        var line = Substring(raw)
        while let last = line.last, last.isNewline { line = line.dropLast() }  // "\r\n" is one Character
        if line.isEmpty {
            guard let status else { return .partial }
            return (100..<200).contains(status) ? .interimEnd : .finalEnd(status: status)
        }
        if line.hasPrefix("HTTP/") {
            startHead(statusLine: line)
            return .partial
        }
        if let first = line.first, first == " " || first == "\t" {
            // Obsolete line folding: continues the previous field's value.
            if let last = fields.indices.last {
                let value = fields[last].value + " " + trimmed(line)
                fields[last] = HTTPField(name: fields[last].name, value: value)
            } else {
                skippedLines += 1
            }
            return .partial
        }
        guard let colon = line.firstIndex(of: ":"),
            let name = HTTPField.Name(String(line[..<colon]))
        else {
            skippedLines += 1
            return .partial
        }
        let value = trimmed(line[line.index(after: colon)...])
        fields.append(HTTPField(name: name, value: value))
        return .partial
    }

    /// The head read so far as an `HTTPResponse`, or `nil` before a status line.
    var response: HTTPResponse? {
        guard let status, (100...999).contains(status) else { return nil }
        return HTTPResponse(status: .init(code: status, reasonPhrase: reason), headerFields: fields)
    }

    private mutating func startHead(statusLine: Substring) {
        fields = HTTPFields()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        status = parts.count >= 2 ? Int(parts[1]) : nil
        reason = parts.count == 3 ? String(parts[2]) : ""
        if status == nil { skippedLines += 1 }
    }
}

/// Drops leading and trailing spaces and tabs (the only whitespace HTTP allows around a value).
private func trimmed(_ text: Substring) -> String {
    var slice = text
    while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
    return String(slice)
}
