import Foundation

/// A hotel catalogue, the same content as XML or as JSON, for decoding tests and benchmarks.
///
/// ``SampleCatalogue`` decodes both: XML attributes (`id`, `stars`) and elements map to the same
/// properties as the JSON object's keys.
public enum SampleDocuments {
    /// A catalogue of about `approximateBytes` bytes of XML (at least one hotel).
    /// - Parameter approximateBytes: The size to reach; the document ends at the first hotel past it.
    /// - Returns: The document.
    public static func hotelsXML(approximateBytes: Int) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<catalogue xmlns="urn:courier:hotels" generated="2026-11-24T08:00:00Z">"# + "\n"
        var number = 0
        repeat {
            number += 1
            let hotel = SampleCatalogue.Hotel.make(number)
            xml += "  <hotel id=\"\(hotel.id)\" stars=\"\(hotel.stars)\">"
            xml += "<name>\(hotel.name)</name><city>\(hotel.city)</city><price>\(hotel.price)</price>"
            xml += "<opened>\(hotel.opened)</opened><tags>" + hotel.tags.tag.map { "<tag>\($0)</tag>" }.joined() + "</tags>"
            xml += "<description><![CDATA[\(hotel.description)]]></description></hotel>\n"
        } while xml.utf8.count < approximateBytes
        return xml + "</catalogue>\n"
    }

    /// The same catalogue as ``hotelsXML(approximateBytes:)`` with as many hotels, as JSON.
    /// - Parameter approximateBytes: The XML document's size (so both hold the same hotels).
    /// - Returns: The document.
    public static func hotelsJSON(approximateBytes: Int) -> String {
        let count = hotelsXML(approximateBytes: approximateBytes).components(separatedBy: "<hotel ").count - 1
        let catalogue = SampleCatalogue(generated: "2026-11-24T08:00:00Z", hotel: (1...max(1, count)).map(SampleCatalogue.Hotel.make))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(decoding: encoder.encode(catalogue), as: UTF8.self)) ?? "{}"
    }
}

/// The catalogue ``SampleDocuments`` writes; decodes from its XML and its JSON alike.
public struct SampleCatalogue: Codable, Sendable, Hashable {
    /// When the catalogue was made (ISO 8601 text; an attribute in XML).
    public var generated: String
    /// The hotels, in order.
    public var hotel: [Hotel]

    /// One hotel.
    public struct Hotel: Codable, Sendable, Hashable {
        /// Its number (an attribute in XML).
        public var id: Int
        /// 1 to 5 (an attribute in XML).
        public var stars: Int
        /// Its name.
        public var name: String
        /// Its city.
        public var city: String
        /// A night's price.
        public var price: Double
        /// When it opened (ISO 8601 text).
        public var opened: String
        /// Its tags (`<tags><tag>…</tag></tags>` in XML).
        public var tags: Tags
        /// Free text (CDATA in XML, with characters that need escaping elsewhere).
        public var description: String

        /// A hotel's tags.
        public struct Tags: Codable, Sendable, Hashable {
            /// The tags.
            public var tag: [String]
        }

        static func make(_ number: Int) -> Hotel {
            let cities = ["Lisbon", "Porto", "Faro", "Braga", "Coimbra"]
            return Hotel(
                id: number, stars: 1 + number % 5, name: "Hotel \(number)", city: cities[number % cities.count],
                price: Double(60 + number % 240) + 0.5, opened: "20\(10 + number % 15)-05-01T00:00:00Z",
                tags: Tags(tag: number % 2 == 0 ? ["spa", "pool"] : ["garden"]),
                description: "Room \(number) & breakfast <included>; \"quiet\" street.")
        }
    }

    /// Creates a catalogue.
    public init(generated: String, hotel: [Hotel]) {
        self.generated = generated
        self.hotel = hotel
    }
}
