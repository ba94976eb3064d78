import HTTPTypes

/// The request fields a stored response was chosen by (its `Vary`, RFC 9111 §4.1), with the
/// values the request that stored it had: a later request gets the stored response only when
/// its values for those fields are the same.
///
/// Values are compared after light normalisation, as RFC 9111 §4.1 allows: repeated fields are
/// joined with `, `, and whitespace around each comma-separated member is dropped. Field names
/// are case-insensitive.
struct VaryKey: Sendable, Hashable {
    /// The nominated field names (lowercased, sorted, without repeats).
    var names: [String]
    /// Each name's normalised value in the storing request; `nil` where it had none.
    var values: [String?]

    /// The most field names a `Vary` may nominate for the response to be stored.
    static let maxNames = 32

    /// A key read back from a store.
    init(names: [String], values: [String?]) {
        self.names = names
        self.values = values
    }

    /// The key for a response's `Vary` fields and the request it answered; `nil` when the
    /// response cannot be served to any later request (`Vary: *`, or too many names).
    init?(vary: [String], request: HTTPFields) {
        var names = Set<String>()
        for field in vary {
            for member in field.split(separator: ",") {
                let name = member.trimmingHTTPWhitespace().lowercased()
                if name == "*" { return nil }
                if !name.isEmpty { names.insert(name) }
            }
        }
        guard names.count <= Self.maxNames else { return nil }
        self.names = names.sorted()
        values = self.names.map { Self.value(of: $0, in: request) }
    }

    /// Whether `request` nominates the same values.
    func matches(_ request: HTTPFields) -> Bool {
        zip(names, values).allSatisfy { name, value in Self.value(of: name, in: request) == value }
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
