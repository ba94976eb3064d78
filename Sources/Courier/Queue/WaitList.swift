/// A first-in-first-out list that also lets any element leave from the middle, without moving
/// the others: a removed slot becomes a hole, holes at the front are skipped, and the storage is
/// compacted once holes make up half of it. Starting the oldest call is O(1) amortised.
struct WaitList<Element> {
    private var slots: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        slots.append(element)
        count += 1
    }

    /// Removes the first element, from the oldest, for which `matches` is true.
    mutating func removeFirst(where matches: (Element) -> Bool) -> Element? {
        var index = head
        while index < slots.count {
            if let element = slots[index], matches(element) {
                remove(at: index)
                compact()
                return element
            }
            index += 1
        }
        return nil
    }

    /// Removes, oldest first, every element `take` accepts, until `take` returns `nil` (stop).
    /// `take` returns `true` to remove the element, `false` to keep it.
    mutating func drain(_ take: (Element) -> Bool?) {
        var index = head
        while index < slots.count {
            if let element = slots[index] {
                guard let remove = take(element) else { break }
                if remove { self.remove(at: index) }
            }
            index += 1
        }
        compact()
    }

    /// The elements, oldest first.
    var elements: [Element] { slots[head...].compactMap { $0 } }

    private mutating func remove(at index: Int) {
        slots[index] = nil
        count -= 1
        while head < slots.count, slots[head] == nil { head += 1 }
    }

    /// Drops the holes before `head` once they are half the storage (never during a scan).
    private mutating func compact() {
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 32, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
