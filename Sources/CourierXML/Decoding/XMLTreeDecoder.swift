#if XML
    import Foundation
    import XMLCoder

    /// Courier's XML `Decoder`: reads a ``XMLTree`` with XMLCoder's conventions, so types written for
    /// XMLCoder decode the same way.
    ///
    /// - A key matches child elements of that name first, then an attribute of that name (XMLCoder's
    ///   default node strategy; `nodeDecodingStrategy` is not consulted).
    /// - Several children with one name decode as an array; a keyed or single value takes the first.
    /// - The key `""` is the element's own text (`<price currency="EUR">12</price>`).
    /// - An absent key, or an element with no text, children or attributes, is `nil` for an optional.
    /// - Key, date, data and non-conforming float strategies come from the `XMLDecoder` the call gave.
    struct XMLTreeDecoding {
        let options: Options

        /// What the decoder reads from the caller's `XMLDecoder`, once, when a response decoder is made.
        ///
        /// @unchecked Sendable: the strategies may hold closures and a `DateFormatter`, which calls
        /// only read; nothing here changes after it is made.
        struct Options: @unchecked Sendable {
            var keys: XMLDecoder.KeyDecodingStrategy
            var dates: XMLDecoder.DateDecodingStrategy
            var data: XMLDecoder.DataDecodingStrategy
            var floats: XMLDecoder.NonConformingFloatDecodingStrategy
            var processNamespaces: Bool
            var trimText: Bool
            var userInfo: [CodingUserInfoKey: Any]

            init(_ decoder: XMLDecoder) {
                keys = decoder.keyDecodingStrategy
                dates = decoder.dateDecodingStrategy
                data = decoder.dataDecodingStrategy
                floats = decoder.nonConformingFloatDecodingStrategy
                processNamespaces = decoder.shouldProcessNamespaces
                trimText = decoder.trimValueWhitespaces
                userInfo = decoder.userInfo
            }
        }

        /// Parses `data` and decodes `type` from its root element.
        /// - Parameter expectedElements: The pre-scan's element count, so the tree is allocated once.
        func decode<Value: Decodable>(_ type: Value.Type, from data: Data, expectedElements: Int) throws -> Value {
            let tree = try XMLTree.parse(
                data, processNamespaces: options.processNamespaces, trimText: options.trimText, expectedElements: expectedElements)
            let decoder = XMLNodeDecoder(tree: tree, options: options, node: .element(0), codingPath: [])
            return try decoder.decodeValue(type)
        }
    }

    /// Where a decoder stands.
    enum XMLNode {
        /// One element that stands for its children as an array: the root, or an item of an array.
        case element(Int32)
        /// The children a key matched (usually one); as an array, these elements are the items.
        case matches([Int32])
        /// An attribute's value or an element's own text.
        case value(String)
    }

    /// Arrays decode as empty when their element is absent: zero repetitions of an element is no element.
    protocol XMLAbsentMeansEmpty {}
    extension Array: XMLAbsentMeansEmpty {}

    /// An index on a coding path (`Index 2`), shown as `[3]` in ``XMLDecodingError/path``.
    struct XMLIndexKey: CodingKey {
        let index: Int
        var stringValue: String { "Index \(index)" }
        var intValue: Int? { index }
        init(_ index: Int) { self.index = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.index = intValue }
    }

    final class XMLNodeDecoder: Decoder {
        let tree: XMLTree
        let options: XMLTreeDecoding.Options
        let node: XMLNode
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

        init(tree: XMLTree, options: XMLTreeDecoding.Options, node: XMLNode, codingPath: [any CodingKey]) {
            self.tree = tree
            self.options = options
            self.node = node
            self.codingPath = codingPath
        }

        /// The first element, if the decoder stands on elements.
        var element: Int32? {
            switch node {
            case .element(let element): element
            case .matches(let list): list.first
            case .value: nil
            }
        }

        /// The text a single value is read from.
        var text: String {
            switch node {
            case .value(let value): value
            default: element.map { tree.elements[Int($0)].text } ?? ""
            }
        }

        /// Whether this node counts as `nil`.
        var isNil: Bool {
            switch node {
            case .value: false
            default: element.map(tree.isEmpty) ?? true
            }
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard let element else {
                throw DecodingError.typeMismatch(
                    [String: Any].self,
                    DecodingError.Context(codingPath: codingPath, debugDescription: "expected an element, found a value"))
            }
            return KeyedDecodingContainer(XMLKeyedContainer<Key>(decoder: self, element: element))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            switch node {
            case .element(let element):
                // `<hotels><hotel/>…</hotels>` decoded as [Hotel]: the children are the items.
                return XMLUnkeyedContainer(decoder: self, items: Array(tree.children(of: element)))
            case .matches(let list):
                // `<tag>a</tag><tag>b</tag>` under the key `tag`: the matched elements are the items.
                return XMLUnkeyedContainer(decoder: self, items: list)
            case .value:
                throw DecodingError.typeMismatch(
                    [Any].self, DecodingError.Context(codingPath: codingPath, debugDescription: "expected elements, found a value"))
            }
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { XMLSingleValueContainer(decoder: self) }

        /// A decoder one step down.
        func child(_ node: XMLNode, key: any CodingKey) -> XMLNodeDecoder {
            XMLNodeDecoder(tree: tree, options: options, node: node, codingPath: codingPath + [key])
        }

        /// Decodes a value here, with the strategies for the types that have them.
        func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
            if Value.self == String.self { return try cast(text) }
            if Value.self == Date.self { return try cast(decodeDate()) }
            if Value.self == Data.self { return try cast(decodeData()) }
            if Value.self == URL.self {
                guard let url = URL(string: text) else { throw corrupted("\"\(text)\" is not a URL") }
                return try cast(url)
            }
            if Value.self == Decimal.self {
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw mismatch(Decimal.self)
                }
                return try cast(decimal)
            }
            return try Value(from: self)
        }

        private func cast<Value>(_ value: Any) throws -> Value {
            guard let typed = value as? Value else { throw mismatch(Value.self) }
            return typed
        }

        func mismatch(_ type: Any.Type) -> DecodingError {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return DecodingError.typeMismatch(
                type, DecodingError.Context(codingPath: codingPath, debugDescription: "\"\(shown)\" is not a valid \(type)"))
        }

        func corrupted(_ message: String) -> DecodingError {
            DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: message))
        }

        private func decodeDate() throws -> Date {
            switch options.dates {
            case .deferredToDate: return try Date(from: self)
            case .secondsSince1970: return Date(timeIntervalSince1970: try decodeFloatingPoint(Double.self))
            case .millisecondsSince1970: return Date(timeIntervalSince1970: try decodeFloatingPoint(Double.self) / 1000)
            case .iso8601:
                guard let date = ISO8601Parsing.date(text) else { throw corrupted("\"\(text)\" is not an ISO 8601 date") }
                return date
            case .formatted(let formatter):
                guard let date = formatter.date(from: text) else { throw corrupted("\"\(text)\" does not match the date format") }
                return date
            case .custom(let decode): return try decode(self)
            }
        }

        private func decodeData() throws -> Data {
            switch options.data {
            case .deferredToData: return try Data(from: self)
            case .base64:
                guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    throw corrupted("the text is not base64")
                }
                return data
            case .custom(let decode): return try decode(self)
            }
        }

        func decodeBool() throws -> Bool {
            switch text {
            case "true", "1": return true
            case "false", "0": return false
            default: throw mismatch(Bool.self)
            }
        }

        func decodeInteger<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
            guard let value = Value(text, radix: 10) else { throw mismatch(Value.self) }
            return value
        }

        func decodeFloatingPoint<Value: BinaryFloatingPoint & LosslessStringConvertible>(_ type: Value.Type) throws -> Value {
            let text = self.text
            if case .convertFromString(let positive, let negative, let nan) = options.floats {
                if text == positive { return .infinity }
                if text == negative { return -.infinity }
                if text == nan { return .nan }
            }
            guard let value = Value(text), value.isFinite else { throw mismatch(Value.self) }
            return value
        }
    }

    /// ISO 8601 dates as `xs:dateTime` writes them: with or without fractional seconds.
    enum ISO8601Parsing {
        static func date(_ text: String) -> Date? {
            if let date = try? Date(text, strategy: .iso8601) { return date }
            return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
    }
#endif
