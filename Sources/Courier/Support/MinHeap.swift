/// A binary min-heap: push and pop in O(log n), the smallest element in O(1).
struct MinHeap<Element: Comparable> {
    private var storage: [Element] = []

    /// The number of elements.
    var count: Int { storage.count }
    /// Whether the heap is empty.
    var isEmpty: Bool { storage.isEmpty }
    /// The smallest element, `nil` when empty.
    var min: Element? { storage.first }

    /// Adds an element.
    mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element, `nil` when empty.
    @discardableResult
    mutating func popMin() -> Element? {
        guard let last = storage.popLast() else { return nil }
        guard !storage.isEmpty else { return last }
        let smallest = storage[0]
        storage[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallestIndex = parent
            if left < storage.count, storage[left] < storage[smallestIndex] { smallestIndex = left }
            if right < storage.count, storage[right] < storage[smallestIndex] { smallestIndex = right }
            guard smallestIndex != parent else { break }
            storage.swapAt(parent, smallestIndex)
            parent = smallestIndex
        }
        return smallest
    }
}
