#if XML
    import Foundation

    #if canImport(FoundationXML)
        import FoundationXML
    #endif

    /// A parsed document, held compactly: one flat array of elements linked by index, one of
    /// attributes, and each element's direct text. Built in one pass of `XMLParser`'s events.
    ///
    /// XMLCoder holds a document twice while decoding (its element tree, then a tree of boxed
    /// dictionaries made from it): about 23 times the document's size at peak. This tree is the only
    /// copy Courier's decoder reads, a few times the document's size (BENCHMARKS.md).
    final class XMLTree {
        /// One element.
        struct Element {
            /// The element's name: its local name when namespaces are processed.
            var name: String
            /// The element's own text (text nodes and CDATA, concatenated), trimmed when asked.
            var text = ""
            var firstChild: Int32 = -1
            var lastChild: Int32 = -1
            var nextSibling: Int32 = -1
            var firstAttribute: Int32 = 0
            var attributeCount: Int32 = 0
        }

        /// One attribute.
        struct Attribute {
            /// The attribute's name without its namespace prefix when namespaces are processed.
            var name: String
            var value: String
        }

        /// Every element, in document order; the root is element 0.
        fileprivate(set) var elements: [Element] = []
        private(set) var attributes: [Attribute] = []

        /// The child elements of `element`, in order.
        func children(of element: Int32) -> ChildSequence { ChildSequence(tree: self, upcoming: elements[Int(element)].firstChild) }

        /// The attributes of `element`.
        func attributes(of element: Int32) -> ArraySlice<Attribute> {
            let item = elements[Int(element)]
            return attributes[Int(item.firstAttribute)..<Int(item.firstAttribute + item.attributeCount)]
        }

        /// Whether `element` has no children, no attributes and no text.
        func isEmpty(_ element: Int32) -> Bool {
            let item = elements[Int(element)]
            return item.firstChild < 0 && item.attributeCount == 0 && item.text.isEmpty
        }

        /// Walks the sibling links.
        struct ChildSequence: Sequence, IteratorProtocol {
            let tree: XMLTree
            var upcoming: Int32
            mutating func next() -> Int32? {
                guard upcoming >= 0 else { return nil }
                defer { upcoming = tree.elements[Int(upcoming)].nextSibling }
                return upcoming
            }
        }

        /// Parses `data`.
        /// - Parameters:
        ///   - processNamespaces: Whether names lose their prefixes (and `xmlns` declarations are not attributes).
        ///   - trimText: Whether each element's text is trimmed of surrounding whitespace.
        ///   - expectedElements: How many elements to make room for (the pre-scan counts them).
        /// - Throws: The parser's error when the document is not well-formed.
        static func parse(_ data: Data, processNamespaces: Bool, trimText: Bool, expectedElements: Int) throws -> XMLTree {
            let builder = Builder(processNamespaces: processNamespaces, trimText: trimText)
            builder.tree.elements.reserveCapacity(max(1, expectedElements))
            let parser = XMLParser(data: data)
            parser.shouldProcessNamespaces = processNamespaces
            parser.shouldResolveExternalEntities = false
            parser.delegate = builder
            guard parser.parse(), !builder.tree.elements.isEmpty, builder.stack.isEmpty else {
                throw parser.parserError ?? XMLDecodingError(path: "/", reason: "the document ends before its root element does")
            }
            return builder.tree
        }

        /// Turns parser events into the tree. Used by one parse on one thread.
        private final class Builder: NSObject, XMLParserDelegate {
            let tree = XMLTree()
            var stack: [Int32] = []
            let processNamespaces: Bool
            let trimText: Bool

            init(processNamespaces: Bool, trimText: Bool) {
                self.processNamespaces = processNamespaces
                self.trimText = trimText
            }

            func parser(
                _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes attributeDict: [String: String] = [:]
            ) {
                // A second root cannot happen (the parser refuses it), but stay safe.
                guard !(stack.isEmpty && !tree.elements.isEmpty) else { return parser.abortParsing() }
                let index = Int32(tree.elements.count)
                let element = Element(
                    name: elementName, firstAttribute: Int32(tree.attributes.count), attributeCount: Int32(attributeDict.count))
                for (name, value) in attributeDict {
                    tree.attributes.append(Attribute(name: processNamespaces ? XMLTree.localName(name) : name, value: value))
                }
                if let parent = stack.last {
                    let last = tree.elements[Int(parent)].lastChild
                    if last >= 0 { tree.elements[Int(last)].nextSibling = index } else { tree.elements[Int(parent)].firstChild = index }
                    tree.elements[Int(parent)].lastChild = index
                }
                tree.elements.append(element)
                stack.append(index)
            }

            /// Stops at the first error. libxml2 would go on and report every later one, and
            /// FoundationXML leaks a little memory for each error it reports (found by the `xml` fuzz
            /// target), so a malformed document costs one error, not hundreds.
            func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
                parser.abortParsing()
            }

            func parser(_ parser: XMLParser, foundCharacters string: String) {
                guard let current = stack.last else { return }
                tree.elements[Int(current)].text += string
            }

            func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
                guard let current = stack.last else { return }
                tree.elements[Int(current)].text += String(decoding: CDATABlock, as: UTF8.self)
            }

            func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
                guard let current = stack.popLast() else { return }
                // Whitespace between child elements is layout, not content; a leaf's is trimmed when asked.
                guard trimText || tree.elements[Int(current)].firstChild >= 0 else { return }
                let utf8 = tree.elements[Int(current)].text.utf8
                guard let first = utf8.first, let last = utf8.last, XMLTree.isSpace(first) || XMLTree.isSpace(last) else { return }
                let start = utf8.firstIndex { !XMLTree.isSpace($0) } ?? utf8.endIndex
                let end = utf8.lastIndex { !XMLTree.isSpace($0) }.map(utf8.index(after:)) ?? start
                tree.elements[Int(current)].text = start < end ? String(Substring(utf8[start..<end])) : ""
            }
        }

        /// XML's whitespace: space, tab, carriage return, line feed.
        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        /// `p:name` → `name`.
        static func localName(_ name: String) -> String {
            guard let colon = name.lastIndex(of: ":") else { return name }
            return String(name[name.index(after: colon)...])
        }
    }
#endif
