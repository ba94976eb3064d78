/// The alarms of one clock: what to run, and when.
///
/// A value type shared by both clocks (``DeadlineWatch`` for the system clock, ``ManualTimeSource``
/// for tests), kept behind their lock.
///
/// Built for alarms that are almost always removed before they ring (a call's deadline is removed
/// when the call ends, microseconds later): adding and removing one is a slot in an array, reused
/// through a free list, with no hashing, no ordering and no allocation once the array has grown to
/// the most alarms ever waiting at once. Finding what is due and the earliest instant scans the
/// slots, which the clock does only when its timer rings (about once per alarm that really rings,
/// or once per lifetime of the alarms waiting). Instants are ``Moment``s, so a slot has a fixed
/// size and the array's code is specialised.
struct AlarmTable {
    /// One slot: a waiting alarm, or a free one (no action).
    private struct Slot {
        var instant: Moment
        /// (In a struct, not a bare closure in a generic array: that would be re-abstracted, an
        /// allocation per alarm.)
        var action: (@Sendable () -> Void)?
        /// Bumped each time the slot is reused, so an old alarm's id never removes a new one.
        var generation: UInt32
        /// When it was added, among all alarms: alarms due at one instant ring in this order.
        var order: UInt64
    }

    private var slots: [Slot] = []
    /// Indices of free slots.
    private var free: [Int] = []
    private var added: UInt64 = 0

    /// Alarms waiting to ring.
    private(set) var count = 0
    /// Slots, waiting and free (for tests: the table never grows past the most alarms waiting at once).
    var capacity: Int { slots.count }

    /// Adds an alarm and returns its id (never 0).
    mutating func add(at instant: Moment, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        count += 1
        added &+= 1
        if let index = free.popLast() {
            slots[index].instant = instant
            slots[index].action = action
            slots[index].order = added
            return Self.id(index: index, generation: slots[index].generation)
        }
        slots.append(Slot(instant: instant, action: action, generation: 0, order: added))
        return Self.id(index: slots.count - 1, generation: 0)
    }

    /// Removes an alarm; `true` when it was still waiting.
    mutating func remove(_ id: UInt64) -> Bool {
        guard let index = index(of: id) else { return false }
        release(index)
        return true
    }

    /// Removes and returns the actions of every alarm due at `now`, earliest first (in the order
    /// they were added, for one instant).
    mutating func takeDue(at now: Moment) -> [@Sendable () -> Void] {
        var due: [(instant: Moment, order: UInt64, action: @Sendable () -> Void)] = []
        for index in slots.indices {
            guard let action = slots[index].action, !(now < slots[index].instant) else { continue }
            due.append((slots[index].instant, slots[index].order, action))
            release(index)
        }
        guard !due.isEmpty else { return [] }
        due.sort { ($0.instant, $0.order) < ($1.instant, $1.order) }
        return due.map(\.action)
    }

    /// The instant of the earliest alarm still waiting.
    func earliest() -> Moment? {
        var earliest: Moment?
        for slot in slots where slot.action != nil {
            if earliest.map({ slot.instant < $0 }) ?? true { earliest = slot.instant }
        }
        return earliest
    }

    /// The slot an id names, when its alarm is still waiting.
    private func index(of id: UInt64) -> Int? {
        let index = Int(id & 0xFFFF_FFFF) - 1
        guard index >= 0, index < slots.count, slots[index].action != nil, slots[index].generation == UInt32(id >> 32) else {
            return nil
        }
        return index
    }

    /// Frees a waiting slot.
    private mutating func release(_ index: Int) {
        slots[index].action = nil
        slots[index].generation &+= 1
        free.append(index)
        count -= 1
    }

    /// An id: the slot's index plus one in the low 32 bits (so no id is 0), its generation above.
    private static func id(index: Int, generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(index + 1)
    }
}
