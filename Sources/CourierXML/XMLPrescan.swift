#if XML
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
            /// The bytes to hand to the parser: the document, or its UTF-8 form when it came in UTF-16.
            var document = Data()
        }

        /// Scans `data`.
        /// - Returns: The root's name and the element count.
        /// - Throws: ``XMLDecodingError`` when the document is too large or too deep, or declares a DTD.
        static func check(_ data: Data, limits: XMLLimits) throws(XMLDecodingError) -> Outline {
            guard data.count <= limits.maxBytes else {
                throw XMLDecodingError(path: "/", reason: "the document is \(data.count) bytes, over the limit of \(limits.maxBytes)")
            }
            let document = try transcodedUTF16(data) ?? data
            try checkUTF8(document)
            let result: Result<Outline, XMLDecodingError> = document.withUnsafeBytes { raw in
                Result { () throws(XMLDecodingError) in try scan(raw.bindMemory(to: UInt8.self), maxDepth: limits.maxDepth) }
            }
            var outline = try result.get()
            outline.document = document
            return outline
        }

        /// A document that starts with a UTF-16 byte order mark, turned into UTF-8 without its XML
        /// declaration (which would tell libxml2 to read the UTF-8 as UTF-16); `nil` for any other.
        ///
        /// libxml2's own UTF-16 reader dereferences null on a broken surrogate pair (found by the
        /// `xml` fuzz target), so Courier converts, and refuses what is not valid UTF-16.
        private static func transcodedUTF16(_ data: Data) throws(XMLDecodingError) -> Data? {
            let bigEndian: Bool
            if data.starts(with: [0xFE, 0xFF]) {
                bigEndian = true
            } else if data.starts(with: [0xFF, 0xFE]) {
                bigEndian = false
            } else {
                return nil
            }
            let bytes = [UInt8](data.dropFirst(2))
            guard bytes.count.isMultiple(of: 2) else {
                throw XMLDecodingError(path: "/", reason: "the UTF-16 document has an odd number of bytes")
            }
            let (high, low) = bigEndian ? (0, 1) : (1, 0)
            let units = stride(from: 0, to: bytes.count, by: 2).map { (index: Int) -> UInt16 in
                let first = UInt16(bytes[index + high]) << 8
                return first | UInt16(bytes[index + low])
            }
            guard var text = String(validating: units, as: UTF16.self) else {
                throw XMLDecodingError(path: "/", reason: "the document starts with a UTF-16 byte order mark but is not valid UTF-16")
            }
            if startsWithDeclaration(text) {
                guard let end = text.range(of: "?>") else {
                    throw XMLDecodingError(path: "/", reason: "the document's XML declaration never ends")
                }
                text.removeSubrange(..<end.upperBound)
            }
            return Data(text.utf8)
        }

        /// Whether `text` starts with an XML declaration (`<?xml` and a space), not a processing
        /// instruction such as `<?xml-stylesheet`.
        private static func startsWithDeclaration(_ text: some StringProtocol) -> Bool {
            guard text.hasPrefix("<?xml"), let next = text.utf8.dropFirst(5).first else { return false }
            return XMLTree.isSpace(next)
        }

        /// Refuses a document that is not valid UTF-8, unless it declares an 8-bit encoding libxml2
        /// turns into valid UTF-8 itself (the ISO 8859 family, windows-1252). Any other declared
        /// encoding is refused, UTF-16 included: a UTF-16 document with a byte order mark has been
        /// turned into UTF-8 before this check, and one without is refused.
        ///
        /// FoundationXML force-unwraps its UTF-8 conversions of element and attribute names: a name
        /// with invalid bytes traps inside `XMLParser` and takes the process down (found by
        /// `MutatedXMLTests`). Checking the bytes first keeps a hostile server from doing that. An
        /// encoding libxml2 does not know is passed through unconverted, so it would reach the same
        /// trap (found by the `xml` fuzz target with `encoding="UT]-8"`).
        private static func checkUTF8(_ data: Data) throws(XMLDecodingError) {
            if let declared = declaredEncoding(data), !utf8Names.contains(declared) {
                guard convertedEncodings.contains(declared) else {
                    throw XMLDecodingError(
                        path: "/", reason: "the document declares the encoding \"\(declared)\", which Courier does not read")
                }
                return
            }
            let valid = data.withUnsafeBytes { raw in String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) != nil }
            guard valid else {
                throw XMLDecodingError(path: "/", reason: "the document is not valid UTF-8 and declares no other encoding")
            }
            // XML has no NUL character; libxml2 would take NULs at the start for UTF-16 or UCS-4
            // without a byte order mark and read the declaration in that encoding instead.
            let hasNUL = data.withUnsafeBytes { raw in raw.baseAddress.map { memchr($0, 0, raw.count) != nil } ?? false }
            guard !hasNUL else {
                throw XMLDecodingError(path: "/", reason: "the document contains a NUL byte, which XML does not allow")
            }
        }

        /// Declared encodings whose bytes must be valid UTF-8 (ASCII is a subset).
        private static let utf8Names: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii"]

        /// Declared encodings libxml2 converts to UTF-8 before any name reaches FoundationXML.
        private static let convertedEncodings = Set(
            ["latin1", "windows-1252", "cp1252"] + (1...15).filter { $0 != 12 }.map { "iso-8859-\($0)" })

        /// The `encoding` of the XML declaration, lowercased; `nil` when there is none, and empty when
        /// the declaration names one without a complete quoted value (which is refused). The
        /// declaration is read after a UTF-8 byte order mark too.
        private static func declaredEncoding(_ data: Data) -> String? {
            var head = [UInt8](data.prefix(512))
            if head.starts(with: [0xEF, 0xBB, 0xBF]) { head.removeFirst(3) }
            let text = String(decoding: head, as: UTF8.self)
            guard startsWithDeclaration(text) else { return nil }
            let declaration = text.prefix { $0 != ">" }
            guard let name = declaration.range(of: "encoding") else { return nil }
            let rest = declaration[name.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard let quote = rest.first, quote == "\"" || quote == "'" else { return "" }
            let value = rest.dropFirst()
            guard let end = value.firstIndex(of: quote) else { return "" }
            return String(value[..<end]).lowercased()
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
                    let start = index + piOpen.count
                    skip(past: piClose)
                    try checkInstruction(UnsafeBufferPointer(rebasing: bytes[min(start, index)..<index]))
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

        /// Refuses a processing instruction with nothing after its target (`<?name?>`): libxml2 hands
        /// FoundationXML a null pointer for its data, which it reads anyway and takes the process down
        /// (found by the `xml` fuzz target). `instruction` runs from after `<?` to the end of `?>`.
        private static func checkInstruction(_ instruction: UnsafeBufferPointer<UInt8>) throws(XMLDecodingError) {
            guard instruction.count >= piClose.count, instruction.suffix(piClose.count).elementsEqual(piClose) else { return }
            let body = instruction.dropLast(piClose.count)
            let targetEnd = body.firstIndex(where: XMLTree.isSpace) ?? body.endIndex
            guard body[targetEnd...].allSatisfy(XMLTree.isSpace) else { return }
            let target = String(decoding: body[..<targetEnd], as: UTF8.self)
            throw XMLDecodingError(
                path: "/", reason: "the document has a processing instruction without data (<?\(target)?>), which is refused")
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
#endif
