import Courier
import HTTPTypes

/// The request fields a stored response was chosen by (its `Vary`, RFC 9111 §4.1), with a keyed
/// fingerprint of the values the request that stored it had (never the values: a `Vary: Cookie`
/// or `Vary: X-Api-Key` entry on disk must not hold the cookie or the key): a later request gets
/// the stored response only when its values fingerprint the same under the cache's key
/// (``ResponseCache/varyKey``).
///
/// Values are compared after light normalisation, as RFC 9111 §4.1 allows: repeated fields are
/// joined with `, `, and whitespace around each comma-separated member is dropped. Field names
/// are case-insensitive.
struct VaryKey: Sendable, Hashable {
    /// The nominated field names (lowercased, sorted, without repeats).
    var names: [String]
    /// The fingerprint of each name's normalised value in the storing request; `nil` where it had none.
    var values: [String?]

    /// The most field names a `Vary` may nominate for the response to be stored.
    static let maxNames = 32

    /// A key read back from a store.
    init(names: [String], values: [String?]) {
        self.names = names
        self.values = values
    }

    /// The key for a response's `Vary` fields and the request it answered, its values
    /// fingerprinted under `key`; `nil` when the response cannot be served to any later request
    /// (`Vary: *`, or too many names).
    init?(vary: [String], request: HTTPFields, key: FingerprintKey) {
        guard let names = Self.names(of: vary) else { return nil }
        self.names = names
        values = names.map { Self.fingerprint(of: $0, in: request, key: key) }
    }

    /// The field names `Vary` values nominate (lowercased, sorted, without repeats); `nil` when a
    /// response with them cannot be served to any later request (`*`, or too many names).
    static func names(of vary: [String]) -> [String]? {
        var names = Set<String>()
        for field in vary {
            for member in field.split(separator: ",") {
                let name = member.trimmingHTTPWhitespace().lowercased()
                if name == "*" { return nil }
                if !name.isEmpty { names.insert(name) }
            }
        }
        guard names.count <= maxNames else { return nil }
        return names.sorted()
    }

    /// Whether `request` nominates the same values (their fingerprints under `key` are the same).
    func matches(_ request: HTTPFields, key: FingerprintKey) -> Bool {
        zip(names, values).allSatisfy { name, value in Self.fingerprint(of: name, in: request, key: key) == value }
    }

    /// The fingerprint of a request's normalised value for `name` under `key`; `nil` when it has none.
    static func fingerprint(of name: String, in fields: HTTPFields, key: FingerprintKey) -> String? {
        value(of: name, in: fields).map { key.fingerprint(Array($0.utf8)) }
    }

    /// A request's value for `name`, normalised; `nil` when it has none (or the name is not a
    /// valid field name, so no request can carry it).
    static func value(of name: String, in fields: HTTPFields) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let values = fields[values: fieldName]
        guard !values.isEmpty else { return nil }
        return values.flatMap { $0.split(separator: ",").map { String($0.trimmingHTTPWhitespace()) } }.joined(separator: ",")
    }
}
