#if XML
    /// Which container a value asks for first when it encodes itself.
    ///
    /// XMLCoder traps (`fatalError`) when the top-level value is a single value, so Courier asks the
    /// value first with this encoder, which records the container and encodes nothing below it.
    enum TopLevelShape: Equatable {
        case keyed, unkeyed, singleValue, nothing

        /// The shape of `value`'s top level.
        static func of(_ value: some Encodable) -> TopLevelShape {
            let probe = ShapeProbe()
            try? value.encode(to: probe)
            return probe.shape
        }
    }

    /// An encoder that records the first container asked for and ignores everything written into it.
    private final class ShapeProbe: Encoder {
        var shape = TopLevelShape.nothing
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        private func record(_ kind: TopLevelShape) {
            if shape == .nothing { shape = kind }
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            record(.keyed)
            return KeyedEncodingContainer(Ignoring<Key>())
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            record(.unkeyed)
            return Ignoring<ProbeKey>()
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            record(.singleValue)
            return Ignoring<ProbeKey>()
        }
    }

    private struct ProbeKey: CodingKey {
        var stringValue: String { "" }
        var intValue: Int? { nil }
        init?(stringValue: String) {}
        init?(intValue: Int) {}
    }

    /// Accepts every write and keeps nothing; nested values are not encoded at all.
    private struct Ignoring<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }

        mutating func encodeNil(forKey key: Key) {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {}
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Ignoring<NestedKey>())
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { ShapeProbe() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { ShapeProbe() }

        mutating func encodeNil() {}
        mutating func encode<T: Encodable>(_ value: T) {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Ignoring<NestedKey>())
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    }
#endif
