/// The alarms of one clock: what to run, and when, in a heap ordered by instant.
///
/// A value type shared by both clocks (``DeadlineWatch`` for the system clock, ``ManualTimeSource``
/// for tests), kept behind their lock. Removing an alarm leaves its heap slot behind; stale slots
/// are skipped when they reach the top, and the heap is rebuilt when they outnumber live ones.
struct AlarmTable {
    private struct Entry: Comparable {
        var instant: ContinuousClock.Instant
        var id: UInt64
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.instant, lhs.id) < (rhs.instant, rhs.id)
        }
    }

    /// An alarm. (A struct, not a tuple: a closure stored in a generic container as a bare
    /// function value is re-abstracted, which allocates a thunk on every alarm.)
    private struct Alarm {
        var instant: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }

    private var nextID: UInt64 = 0
    private var alarms: [UInt64: Alarm] = [:]
    private var heap = MinHeap<Entry>()

    /// Alarms waiting to ring.
    var count: Int { alarms.count }
    /// Heap slots, live and stale (for tests).
    var slots: Int { heap.count }

    /// Adds an alarm and returns its id.
    mutating func add(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        nextID &+= 1
        alarms[nextID] = Alarm(instant: instant, action: action)
        heap.push(Entry(instant: instant, id: nextID))
        return nextID
    }

    /// Removes an alarm; `true` when it was still waiting.
    mutating func remove(_ id: UInt64) -> Bool {
        guard alarms.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64, heap.count > 2 * alarms.count {
            var fresh = MinHeap<Entry>()
            for (id, alarm) in alarms { fresh.push(Entry(instant: alarm.instant, id: id)) }
            heap = fresh
        }
        return true
    }

    /// Removes and returns the actions of every alarm due at `now`, earliest first.
    mutating func takeDue(at now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        var due: [@Sendable () -> Void] = []
        while let first = heap.min, first.instant <= now || alarms[first.id] == nil {
            heap.popMin()
            if let alarm = alarms.removeValue(forKey: first.id) { due.append(alarm.action) }
        }
        return due
    }

    /// The instant of the earliest alarm still waiting (stale slots on top are dropped).
    mutating func earliest() -> ContinuousClock.Instant? {
        while let first = heap.min {
            if alarms[first.id] != nil { return first.instant }
            heap.popMin()
        }
        return nil
    }
}
