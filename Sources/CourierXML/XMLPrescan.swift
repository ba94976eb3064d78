import Foundation

/// A single pass over a document's bytes, before any parser runs: it enforces ``XMLLimits``,
/// refuses document type declarations, and reads the root element's name for error paths.
///
/// It only tracks markup boundaries (tags, comments, CDATA, processing instructions, quoted
/// attribute values); whether the document is well-formed is left to the parser that follows. An
/// unterminated construct ends the scan without error for the same reason.
enum XMLPrescan {
    /// What the scan found.
    struct Outline {
        /// The root element's name as written (with its prefix); `nil` when there is no element.
        var root: String?
        /// How many start tags the document has (what the tree will hold).
        var elementCount: Int
    }

    /// Scans `data`.
    /// - Returns: The root's name and the element count.
    /// - Throws: ``XMLDecodingError`` when the document is too large or too deep, or declares a DTD.
    static func check(_ data: Data, limits: XMLLimits) throws(XMLDecodingError) -> Outline {
        guard data.count <= limits.maxBytes else {
            throw XMLDecodingError(path: "/", reason: "the document is \(data.count) bytes, over the limit of \(limits.maxBytes)")
        }
        try checkUTF8(data)
        let result: Result<Outline, XMLDecodingError> = data.withUnsafeBytes { raw in
            Result { () throws(XMLDecodingError) in try scan(raw.bindMemory(to: UInt8.self), maxDepth: limits.maxDepth) }
        }
        return try result.get()
    }

    /// Refuses a document that is not valid UTF-8, unless it declares another encoding (or starts
    /// with a UTF-16 byte order mark), which libxml2 turns into valid UTF-8 itself.
    ///
    /// FoundationXML force-unwraps its UTF-8 conversions of element and attribute names: a name
    /// with invalid bytes traps inside `XMLParser` and takes the process down (found by
    /// `MutatedXMLTests`). Checking the bytes first keeps a hostile server from doing that.
    private static func checkUTF8(_ data: Data) throws(XMLDecodingError) {
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) { return }
        if let declared = declaredEncoding(data), declared != "utf-8", declared != "utf8" { return }
        let valid = data.withUnsafeBytes { raw in String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) != nil }
        guard valid else {
            throw XMLDecodingError(path: "/", reason: "the document is not valid UTF-8 and declares no other encoding")
        }
    }

    /// The `encoding` of the XML declaration, lowercased; `nil` when there is none.
    private static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(256), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>"),
            let name = head[..<end.lowerBound].range(of: "encoding")
        else { return nil }
        let rest = head[name.upperBound..<end.lowerBound].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote }).lowercased()
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(XMLDecodingError) -> Outline {
        var index = 0
        var elementCount = 0
        var depth = 0
        var root: String?
        let count = bytes.count

        /// Moves `index` just past the next occurrence of `terminator`, or to the end.
        func skip(past terminator: [UInt8]) {
            while index < count {
                if bytes[index] == terminator[0], index + terminator.count <= count,
                    (1..<terminator.count).allSatisfy({ bytes[index + $0] == terminator[$0] })
                {
                    index += terminator.count
                    return
                }
                index += 1
            }
        }
        func startsWith(_ prefix: [UInt8]) -> Bool {
            index + prefix.count <= count && prefix.indices.allSatisfy { bytes[index + $0] == prefix[$0] }
        }

        while index < count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            if startsWith(commentOpen) {
                skip(past: commentClose)
            } else if startsWith(cdataOpen) {
                skip(past: cdataClose)
            } else if startsWith(piOpen) {
                skip(past: piClose)
            } else if startsWith(declarationOpen) {
                // `<!DOCTYPE`, `<!ENTITY`, `<!ELEMENT`…: DTD syntax, refused wherever it appears.
                throw XMLDecodingError(
                    path: "/", reason: "the document declares a DTD (<!…>); document type declarations are refused (no entities)")
            } else if startsWith(endTagOpen) {
                depth -= 1
                skip(past: tagClose)
            } else {
                let nameStart = index + 1
                var nameEnd = nameStart
                while nameEnd < count, !isNameEnd(bytes[nameEnd]) { nameEnd += 1 }
                // The tag runs to the first `>` outside a quoted attribute value.
                index = nameEnd
                var quote: UInt8?
                var selfClosing = false
                while index < count {
                    let byte = bytes[index]
                    index += 1
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: ">") {
                        selfClosing = index >= 2 && bytes[index - 2] == UInt8(ascii: "/")
                        break
                    }
                }
                if root == nil {
                    root = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd]), as: UTF8.self)
                }
                if depth + 1 > maxDepth {
                    throw XMLDecodingError(
                        path: "/", reason: "elements are nested deeper than the limit of \(maxDepth) levels")
                }
                if !selfClosing { depth += 1 }
                elementCount += 1
            }
        }
        return Outline(root: root, elementCount: elementCount)
    }

    private static func isNameEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
    }

    private static let commentOpen = Array("<!--".utf8)
    private static let commentClose = Array("-->".utf8)
    private static let cdataOpen = Array("<![CDATA[".utf8)
    private static let cdataClose = Array("]]>".utf8)
    private static let piOpen = Array("<?".utf8)
    private static let piClose = Array("?>".utf8)
    private static let declarationOpen = Array("<!".utf8)
    private static let endTagOpen = Array("</".utf8)
    private static let tagClose = Array(">".utf8)
}
