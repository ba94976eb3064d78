#if XML
    import Foundation

    #if canImport(FoundationXML)
        import FoundationXML
    #endif

    /// Reads the `Fault` of a SOAP envelope with one pass of `XMLParser`, keeping the detail's
    /// contents as XML (XMLCoder's tree would lose them).
    ///
    /// Only called once the envelope is known to be within ``XMLLimits`` and to carry a fault; it
    /// still runs the pre-scan itself, because `XMLParser` traps on some bytes the pre-scan refuses.
    final class SOAPFaultReader: NSObject, XMLParserDelegate {
        // Used by one parse on one thread; never shared.
        private var path: [String] = []
        private var version: SOAPVersion?
        private var text = ""
        private var code: String?
        private var subcodes: [String] = []
        private var reason: String?
        private var actor: String?
        private var node: String?
        private var detail: String?
        /// The detail's depth in `path` while inside it, and what has been written of it.
        private var detailDepth: Int?
        private var detailXML = ""
        private var pendingPrefixes: [(String, String)] = []

        /// The fault in `data`, or `nil` when the envelope holds none or is not SOAP.
        static func read(_ data: Data, limits: XMLLimits = .default) -> SOAPFault? {
            // FoundationXML force-unwraps names that are not UTF-8 (found by the `xml` fuzz target).
            guard let outline = try? XMLPrescan.check(data, limits: limits) else { return nil }
            let reader = SOAPFaultReader()
            let parser = XMLParser(data: outline.document)
            parser.shouldProcessNamespaces = true
            parser.shouldReportNamespacePrefixes = true
            parser.shouldResolveExternalEntities = false
            parser.delegate = reader
            guard parser.parse(), let version = reader.version, let code = reader.code else { return nil }
            return SOAPFault(
                version: version, code: code, subcodes: reader.subcodes, reason: reader.reason ?? "", actor: reader.actor,
                node: reader.node, detail: reader.detail)
        }

        /// Where the parser is, below `Envelope/Body/Fault`, as local names; `nil` outside the fault.
        private var faultPath: ArraySlice<String>? {
            guard path.count >= 3, path[0] == "Envelope", path[1] == "Body", path[2] == "Fault" else { return nil }
            return path[3...]
        }

        /// Stops at the first error, as ``XMLTree`` does: FoundationXML leaks a little for each one.
        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {
            pendingPrefixes.append((prefix, namespaceURI))
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            let declarations = pendingPrefixes
            pendingPrefixes = []
            if path.isEmpty, elementName == "Envelope" { version = namespaceURI.flatMap(SOAPVersion.init(envelopeNamespace:)) }
            path.append(elementName)
            text = ""
            if detailDepth != nil {
                detailXML += "<" + (qualifiedName ?? elementName)
                for (prefix, uri) in declarations {
                    detailXML += (prefix.isEmpty ? " xmlns" : " xmlns:\(prefix)") + "=\"\(XMLEscaping.attribute(uri))\""
                }
                for (name, value) in attributeDict.sorted(by: { $0.key < $1.key }) {
                    detailXML += " \(name)=\"\(XMLEscaping.attribute(value))\""
                }
                detailXML += ">"
            } else if let inner = faultPath, inner.count == 1, inner.first == "detail" || inner.first == "Detail" {
                detailDepth = path.count
                detailXML = ""
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
            if detailDepth != nil { detailXML += XMLEscaping.text(string) }
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            let string = String(decoding: CDATABlock, as: UTF8.self)
            text += string
            if detailDepth != nil { detailXML += XMLEscaping.text(string) }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            defer {
                path.removeLast()
                text = ""
            }
            if let depth = detailDepth {
                if path.count == depth {
                    detail = detailXML.trimmingCharacters(in: .whitespacesAndNewlines)
                    detailDepth = nil
                } else {
                    detailXML += "</" + (qualifiedName ?? elementName) + ">"
                }
                return
            }
            guard let inner = faultPath else { return }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch Array(inner) {
            case ["faultcode"]: code = value
            case ["faultstring"]: reason = value
            case ["faultactor"], ["Role"]: actor = value
            case ["Node"]: node = value
            case ["Code", "Value"]: code = value
            case _
            where inner.count >= 3 && inner.first == "Code" && inner.last == "Value"
                && inner.dropLast().dropFirst().allSatisfy({ $0 == "Subcode" }):
                subcodes.append(value)
            case ["Reason", "Text"]: if reason == nil { reason = value }
            default: break
            }
        }
    }
#endif
