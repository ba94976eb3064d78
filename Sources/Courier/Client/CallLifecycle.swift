/// A running call's life as a value state machine: the phase it is in, whether its deadline has
/// passed and whether it has ended, with the handlers that stop its waits and what the call holds
/// while it runs (its place among the client's running calls and its deadline's alarm,
/// ``Holdings``). Kept in the call's record (``RunningCall``), under its one lock; each transition
/// returns what to do, and the caller does it after the lock is released (run or drop handlers,
/// remove the alarm, leave the client's running calls).
///
/// ```
/// built ─admit─▶ running(queued | sending … receiving) ──pass──▶ passed ──end──▶ ended
///                   │  (enter: the phase moves on)                                ▲
///                   └────────────────────────────end──────────────────────────────┘
/// ```
///
/// The phase (``NetworkError/Phase``) is the stage's detail: `building` until the call is admitted,
/// then what the chain and the transport enter (`queued`, `sending`, `awaitingResponse`,
/// `receiving`), then `decoding` or `validating`; a deadline that passes reports the phase it
/// struck in.
///
/// The call ends exactly once, by construction: ``end()`` returns the release only on the first
/// call, and every exit of a call (a failure before the head, a refused status, a body read whole,
/// a streamed body ended, failed or dropped) calls it (``RunningCall/end()``), which then removes
/// the alarm and leaves the place the release names: no other copy of them exists.
struct CallLifecycle {
    /// Where a call is.
    enum Stage: Equatable {
        /// Admitted and running: its waits register handlers, which its deadline would run.
        case running
        /// Its deadline passed (by the alarm, or by the client's shutdown): every wait was ended,
        /// and a wait that starts now ends at once. It still holds its place until it ends.
        case passed(byShutdown: Bool)
        /// Ended: its alarm removed, its place left, its handlers dropped. Nothing runs any more.
        /// `passed` keeps how its deadline stood, for the error it reports.
        case ended(passed: Bool, byShutdown: Bool)
    }

    /// A handler that stops one wait under the call.
    struct Handler {
        var run: @Sendable () -> Void
    }

    /// What a running call holds, which its end releases: its place among the client's running
    /// calls (``CallAdmission``) and its deadline's alarm.
    struct Holdings: Equatable {
        /// Its place among the client's running calls (meaningless for a long call's connection,
        /// whose owner has no admission: the long call holds the place).
        var slot: Int
        /// `nil` for a call with no deadline of its own to ring (a long call without an end).
        var alarm: TimeSourceAlarm?
    }

    /// What the first ``end()`` hands back, to be done outside the lock.
    struct Release {
        /// The handlers to drop (their captures may run deinitializers).
        var handlers: Handlers
        /// What to release: the alarm to remove and the place to leave (`nil` for a call that
        /// was never admitted).
        var holdings: Holdings?
    }

    /// What ``register(_:)`` did with a handler.
    enum Registration: Equatable {
        /// Kept under this token, for ``remove(_:)``.
        case kept(UInt64)
        /// Not kept: the deadline has passed, so the caller runs it now.
        case runNow
        /// Not kept and not to run: the call has ended.
        case dropped
    }

    private(set) var stage = Stage.running
    /// Where the call is within its stage: `building` until admitted, then what the chain and
    /// its transport enter.
    private(set) var phase = NetworkError.Phase.building
    /// What the call holds once admitted (see ``admit(_:)``), until it ends.
    private(set) var holdings: Holdings?
    /// Set only on the process's ``RunningCall/never``: it never passes and keeps nothing.
    var isNever = false
    private var nextID: UInt64 = 0
    private var handlers = Handlers()

    /// Whether the deadline has passed (before or after the call ended).
    var hasPassed: Bool {
        switch stage {
        case .running: false
        case .passed: true
        case .ended(let passed, _): passed
        }
    }

    /// Whether the client's shutdown, not the deadline, ended the call's waits.
    var passedByShutdown: Bool {
        switch stage {
        case .running: false
        case .passed(let byShutdown): byShutdown
        case .ended(let passed, let byShutdown): passed && byShutdown
        }
    }

    /// The deadline passes (`byShutdown`: the client's graceful shutdown ran out of time).
    /// - Returns: The handlers to run, once; none when it had passed, the call had ended, or on
    ///   ``RunningCall/never``.
    mutating func pass(byShutdown: Bool) -> Handlers {
        guard !isNever, stage == .running else { return Handlers() }
        stage = .passed(byShutdown: byShutdown)
        return handlers.takeAll()
    }

    /// A wait starts: keep its handler while the call runs.
    mutating func register(_ handler: Handler) -> Registration {
        if isNever { return .dropped }
        switch stage {
        case .running:
            nextID &+= 1
            handlers.insert(handler, id: nextID)
            return .kept(nextID)
        case .passed: return .runNow
        case .ended: return .dropped
        }
    }

    /// A wait is over: its handler goes (returned, to be released outside the lock).
    mutating func remove(_ id: UInt64) -> Handler? {
        handlers.remove(id)
    }

    /// The call is admitted: it holds `holdings` until it ends, and enters `phase` (`queued` or
    /// `sending`). (Its deadline may have passed already, if its alarm rang at once; it still
    /// holds them, for its end to release.)
    mutating func admit(_ holdings: Holdings, entering phase: NetworkError.Phase) {
        self.phase = phase
        guard !isNever, self.holdings == nil else { return }
        switch stage {
        case .running, .passed: self.holdings = holdings
        case .ended: break  // (cannot happen: a call ends through its owner, after its admission)
        }
    }

    /// The call moves on to `phase`. Once the deadline has passed the phase stays where it
    /// struck (the error names it, whatever a transport enters while it stops); an ended call
    /// that did not pass still moves on (`decoding`, `validating` while it is reported).
    mutating func enter(_ phase: NetworkError.Phase) {
        guard !hasPassed else { return }
        self.phase = phase
    }

    /// The call's deadline alarm, from its admission to its end (a long transfer cancels it once
    /// its head is in, its body having bounds of its own; the end cancels it again, harmlessly).
    var alarm: TimeSourceAlarm? { holdings?.alarm }

    /// The call ends.
    /// - Returns: The first time, what to do outside the lock: drop the handlers, remove the alarm
    ///   and leave the place (``Release``); `nil` when it had ended already, or on
    ///   ``RunningCall/never``.
    mutating func end() -> Release? {
        guard !isNever else { return nil }
        switch stage {
        case .running:
            stage = .ended(passed: false, byShutdown: false)
        case .passed(let byShutdown):
            stage = .ended(passed: true, byShutdown: byShutdown)
        case .ended:
            return nil
        }
        defer { holdings = nil }
        return Release(handlers: handlers.takeAll(), holdings: holdings)
    }

    /// The registered handlers by token. A call has one or two at a time (the transfer's, a
    /// wait's), held inline; more go to a dictionary, so a call allocates nothing for them.
    struct Handlers {
        private var first: (id: UInt64, handler: Handler)?
        private var second: (id: UInt64, handler: Handler)?
        /// (A struct per handler: a bare closure in a dictionary is re-abstracted, an allocation.)
        private var more: [UInt64: Handler] = [:]

        mutating func insert(_ handler: Handler, id: UInt64) {
            if first == nil {
                first = (id, handler)
            } else if second == nil {
                second = (id, handler)
            } else {
                more[id] = handler
            }
        }

        /// Removes the handler with token `id` and returns it (to be released outside the lock).
        mutating func remove(_ id: UInt64) -> Handler? {
            if let slot = first, slot.id == id {
                first = nil
                return slot.handler
            }
            if let slot = second, slot.id == id {
                second = nil
                return slot.handler
            }
            return more.removeValue(forKey: id)
        }

        /// Moves every handler out, leaving none (a move: no retain of each closure).
        mutating func takeAll() -> Handlers {
            var taken = Handlers()
            swap(&taken, &self)
            return taken
        }

        /// Every handler, in no particular order.
        var all: [Handler] {
            [first?.handler, second?.handler].compactMap { $0 } + more.values
        }

        /// How many there are.
        var count: Int { (first == nil ? 0 : 1) + (second == nil ? 0 : 1) + more.count }
    }
}
