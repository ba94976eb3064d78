/// A dictionary that remembers the entry found last: callers that look up the same key in runs
/// (one endpoint, one team) pay a comparison instead of a hash. Not thread-safe; keep it in a
/// `Locked`.
package struct RecentTable<Key: Hashable, Value> {
    private var entries: [Key: Value] = [:]
    private var last: (key: Key, value: Value)?

    /// An empty table.
    package init() {}

    /// How many entries it holds.
    var count: Int { entries.count }

    /// The value for `key`, if present; remembered for the next lookup.
    package mutating func value(for key: Key) -> Value? {
        if let last, last.key == key { return last.value }
        guard let found = entries[key] else { return nil }
        last = (key, found)
        return found
    }

    /// Stores a value and remembers it for the next lookup.
    package mutating func insert(_ value: Value, for key: Key) {
        entries[key] = value
        last = (key, value)
    }
}
