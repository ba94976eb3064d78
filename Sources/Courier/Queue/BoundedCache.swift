/// A dictionary that keeps at most `capacity` entries, dropping the oldest inserted first.
struct BoundedCache<Key: Hashable, Value> {
    let capacity: Int
    private var values: [Key: Value] = [:]
    private var order = WaitList<Key>()

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { values.count }

    subscript(key: Key) -> Value? { values[key] }

    mutating func insert(_ value: Value, for key: Key) {
        if values.updateValue(value, forKey: key) == nil {
            order.append(key)
        }
        while values.count > capacity, let oldest = order.removeFirst(where: { _ in true }) {
            values[oldest] = nil
        }
    }

    mutating func removeAll() {
        values.removeAll()
        order = WaitList()
    }
}
