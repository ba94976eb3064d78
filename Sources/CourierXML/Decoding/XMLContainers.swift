#if XML
    import Foundation
    import XMLCoder

    /// The keyed container over one element: its children by name, then its attributes.
    struct XMLKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: XMLNodeDecoder
        let element: Int32
        var codingPath: [any CodingKey] { decoder.codingPath }

        /// The element's child and attribute names as keys (after the key strategy), in order.
        var allKeys: [Key] {
            var seen = Set<String>()
            var keys: [Key] = []
            for child in decoder.tree.children(of: element) {
                let name = keyName(decoder.tree.elements[Int(child)].name)
                if seen.insert(name).inserted, let key = Key(stringValue: name) { keys.append(key) }
            }
            for attribute in decoder.tree.attributes(of: element) {
                let name = keyName(attribute.name)
                if seen.insert(name).inserted, let key = Key(stringValue: name) { keys.append(key) }
            }
            return keys
        }

        /// A name as the key strategy turns it into a key.
        private func keyName(_ name: String) -> String {
            switch decoder.options.keys {
            case .useDefaultKeys: name
            case .convertFromSnakeCase: KeyConversion.camelCase(name, separator: "_")
            case .convertFromKebabCase: KeyConversion.camelCase(name, separator: "-")
            case .convertFromCapitalized: name.prefix(1).lowercased() + name.dropFirst()
            case .convertFromUppercase: KeyConversion.camelCase(name.lowercased(), separator: "_")
            case .custom(let convert): convert(codingPath + [XMLNameKey(name)]).stringValue
            }
        }

        /// What `key` names here: same-named children, else an attribute's value, else nothing.
        private func lookUp(_ key: Key) -> XMLNode? {
            if key.stringValue.isEmpty { return .value(decoder.tree.elements[Int(element)].text) }
            let tree = decoder.tree
            var matches: [Int32] = []
            for child in tree.children(of: element) where keyName(tree.elements[Int(child)].name) == key.stringValue {
                matches.append(child)
            }
            if !matches.isEmpty { return .matches(matches) }
            for attribute in tree.attributes(of: element) where keyName(attribute.name) == key.stringValue {
                return .value(attribute.value)
            }
            return nil
        }

        private func found(_ key: Key) throws -> XMLNodeDecoder {
            guard let node = lookUp(key) else {
                throw DecodingError.keyNotFound(
                    key, DecodingError.Context(codingPath: codingPath, debugDescription: "no element or attribute \"\(key.stringValue)\""))
            }
            return decoder.child(node, key: key)
        }

        func contains(_ key: Key) -> Bool { lookUp(key) != nil }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let node = lookUp(key) else { return true }
            return decoder.child(node, key: key).isNil
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try found(key).decodeBool() }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try found(key).text }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try found(key).decodeFloatingPoint(Double.self) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try found(key).decodeFloatingPoint(Float.self) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try found(key).decodeInteger(Int.self) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try found(key).decodeInteger(Int8.self) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try found(key).decodeInteger(Int16.self) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try found(key).decodeInteger(Int32.self) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try found(key).decodeInteger(Int64.self) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try found(key).decodeInteger(UInt.self) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try found(key).decodeInteger(UInt8.self) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try found(key).decodeInteger(UInt16.self) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try found(key).decodeInteger(UInt32.self) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try found(key).decodeInteger(UInt64.self) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if T.self is any XMLAbsentMeansEmpty.Type, lookUp(key) == nil {
                return try decoder.child(.matches([]), key: key).decodeValue(type)
            }
            return try found(key).decodeValue(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try found(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try found(key).unkeyedContainer() }

        func superDecoder() throws -> any Decoder { decoder.child(.element(element), key: XMLNameKey("super")) }

        func superDecoder(forKey key: Key) throws -> any Decoder { try found(key) }
    }

    /// The unkeyed container over a list of elements (the items of an array).
    struct XMLUnkeyedContainer: UnkeyedDecodingContainer {
        let decoder: XMLNodeDecoder
        let items: [Int32]
        private(set) var currentIndex = 0

        init(decoder: XMLNodeDecoder, items: [Int32]) {
            self.decoder = decoder
            self.items = items
        }

        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next() throws -> XMLNodeDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    Any.self,
                    DecodingError.Context(codingPath: codingPath + [XMLIndexKey(currentIndex)], debugDescription: "no more elements"))
            }
            defer { currentIndex += 1 }
            return decoder.child(.element(items[currentIndex]), key: XMLIndexKey(currentIndex))
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { return true }
            if decoder.tree.isEmpty(items[currentIndex]) {
                currentIndex += 1
                return true
            }
            return false
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(type) }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decodeBool() }
        mutating func decode(_ type: String.Type) throws -> String { try next().text }
        mutating func decode(_ type: Double.Type) throws -> Double { try next().decodeFloatingPoint(Double.self) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next().decodeInteger(Int.self) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    /// The single value of an element's text or an attribute.
    struct XMLSingleValueContainer: SingleValueDecodingContainer {
        let decoder: XMLNodeDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { decoder.isNil }
        func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool() }
        func decode(_ type: String.Type) throws -> String { decoder.text }
        func decode(_ type: Double.Type) throws -> Double { try decoder.decodeFloatingPoint(Double.self) }
        func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloatingPoint(Float.self) }
        func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(Int.self) }
        func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(Int8.self) }
        func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(Int16.self) }
        func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(Int32.self) }
        func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(Int64.self) }
        func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(UInt.self) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(UInt8.self) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(UInt16.self) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(UInt32.self) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(UInt64.self) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
    }

    /// A key made from an element or attribute name.
    struct XMLNameKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The key strategies' name conversions (XMLCoder's own are internal).
    enum KeyConversion {
        /// `first_name` → `firstName` (leading and trailing separators kept, as JSONDecoder does).
        static func camelCase(_ name: String, separator: Character) -> String {
            guard name.contains(separator), let first = name.firstIndex(where: { $0 != separator }) else { return name }
            var last = name.index(before: name.endIndex)
            while last > first, name[last] == separator { name.formIndex(before: &last) }
            let words = name[first...last].split(separator: separator)
            guard let head = words.first else { return name }
            let body = String(head) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            return String(name[..<first]) + body + String(name[name.index(after: last)...])
        }
    }
#endif
