#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one owner of a running call (OkHttp's `RealCall`, AsyncHTTPClient's `Transaction`): its
/// record under one lock (its life, ``CallLifecycle``, with its phase, its deadline's handlers and
/// what it holds; and its ``RequestMetrics``), and, fixed when it is made, the chain's internals
/// (queue placement, cache, retry budget, body reading, progress meter: ``LinkContext``) and
/// what its end releases against (the client's running calls and the alarm's clock).
///
/// ``RequestContext`` holds one reference to it; the views read it: ``TransferRecorder`` (what a
/// transport writes: the phase and the figures), ``CallDeadline`` (the deadline as a cancellation
/// source) and ``RequestContext/internals``. The call ends in one place, ``end()``: the
/// lifecycle's first `end` returns what the call holds, and this releases it.
///
/// One allocation: the fixed parts and the record are the buffer's header, the mutex its element
/// (as ``Locked``), so a call costs the single `malloc` its recorder cost before.
///
/// A call made for part of another (a hedged copy, a background revalidation) has a record of its
/// own but runs under that call's deadline (``attempt()``); the transfer that callers share
/// (de-duplication) writes the first caller's record and has no deadline (``sharedTransfer()``).
struct RunningCall: @unchecked Sendable, Equatable {
    // @unchecked Sendable: the record is only reached under the mutex; the other parts never change.
    // (A struct around the buffer, as ``Locked``: a `ManagedBuffer` cannot be `Sendable` itself.)

    /// The parts and the mutex, in one allocation.
    private final class Storage: ManagedBuffer<Parts, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The same call (copies of a `RunningCall` are one owner).
    static func == (lhs: RunningCall, rhs: RunningCall) -> Bool { lhs.storage === rhs.storage }

    /// What the owner holds.
    struct Parts {
        /// The chain's internals, read without the lock: they never change.
        let internals: LinkContext
        /// The call whose deadline this one's waits watch, when not its own (see ``attempt()``);
        /// ``never`` for one with no deadline.
        let deadlineOwner: RunningCall?
        /// The call whose record this one writes, when not its own (see ``sharedTransfer()``).
        let recordOwner: RunningCall?
        /// Where the call's place among the running calls is left when it ends; `nil` for a call
        /// never admitted by a client.
        let admission: CallAdmission?
        /// The clock the deadline's alarm is on, for removing it at the end.
        let clock: (any TimeSource)?
        /// Under the mutex.
        var record: Record
    }

    /// The call's record: its life and its figures.
    struct Record {
        var lifecycle: CallLifecycle
        var metrics: RequestMetrics
    }

    /// Whose deadline a call's waits watch.
    enum DeadlineSource {
        /// Its own: an alarm the client sets passes it (a client's call, a long call's connection).
        case own
        /// Another call's (a part of that call: ``attempt()``).
        case of(RunningCall)
        /// None: it never passes and keeps no handler (contexts made outside a client, shared
        /// transfers).
        case none
    }

    /// A call's owner.
    /// - Parameters:
    ///   - transport: The transport's name, for its metrics.
    ///   - internals: The chain's internals for the call.
    ///   - deadline: Whose deadline its waits watch.
    ///   - admission: The client's running calls, which the call enters when it opens.
    ///   - clock: The deadline's clock.
    ///   - recordOwner: Whose record it writes, when not its own.
    ///   - lifecycle: Its life's starting point (``never`` sets `isNever`).
    static func make(
        transport: String, internals: LinkContext, deadline: DeadlineSource, admission: CallAdmission? = nil,
        clock: (any TimeSource)? = nil, recordOwner: RunningCall? = nil, lifecycle: CallLifecycle = CallLifecycle()
    ) -> RunningCall {
        let deadlineOwner: RunningCall? =
            switch deadline {
            case .own: nil
            case .of(let other): other
            case .none: .never
            }
        // (Built in the factory closure, whose result is moved into the buffer: a value built
        // outside and captured would be copied, a retain for each of its references.)
        let buffer = Storage.create(minimumCapacity: 1) { _ in
            Parts(
                internals: internals, deadlineOwner: deadlineOwner, recordOwner: recordOwner, admission: admission, clock: clock,
                record: Record(lifecycle: lifecycle, metrics: RequestMetrics(transport: transport)))
        }
        let storage = unsafeDowncast(buffer, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let code = pthread_mutex_init(mutex, nil)
            // Only fails for lack of memory or a bad attribute (there is none here).
            precondition(code == 0, "pthread_mutex_init failed with \(code)")
        }
        return RunningCall(storage: storage)
    }

    /// The owner of no call: its deadline never passes and it keeps nothing (contexts made outside
    /// a client, shared transfers). One for the process.
    static let never: RunningCall = {
        var lifecycle = CallLifecycle()
        lifecycle.isNever = true
        return make(transport: "", internals: .none, deadline: .own, lifecycle: lifecycle)
    }()

    /// A client's call: its own deadline, released at its end against `admission` and `clock`.
    static func call(transport: String, internals: LinkContext, admission: CallAdmission, clock: any TimeSource) -> RunningCall {
        make(transport: transport, internals: internals, deadline: .own, admission: admission, clock: clock)
    }

    /// Reads one of the fixed parts, without the lock: they are written once, before the owner
    /// is shared, and never again (only ``Parts/record`` changes, under the lock). Read through
    /// the header's pointer, so the access is to that field alone.
    @inline(__always)
    private func fixed<T>(_ read: (UnsafeMutablePointer<Parts>) -> T) -> T {
        storage.withUnsafeMutablePointerToHeader(read)
    }

    /// The chain's internals: fixed, read without the lock.
    @inline(__always)
    var internals: LinkContext { fixed { $0.pointee.internals } }

    /// Runs `body` on this owner's own record, under its lock.
    @inline(__always)
    private func withOwnRecord<R>(_ body: (inout Record) -> R) -> R {
        storage.withUnsafeMutablePointers { parts, mutex in
            let locked = pthread_mutex_lock(mutex)
            // A default mutex fails only when misused (destroyed, or not initialised): a bug here.
            precondition(locked == 0, "pthread_mutex_lock failed with \(locked)")
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                precondition(unlocked == 0, "pthread_mutex_unlock failed with \(unlocked)")
            }
            return body(&parts.pointee.record)
        }
    }

    /// Runs `body` on the record the call's transport writes (its own, or the first caller's for a
    /// shared transfer), under its lock. Never call out to unknown code inside.
    @inline(__always)
    func withRecord<R>(_ body: (inout Record) -> R) -> R {
        if let owner = fixed({ $0.pointee.recordOwner }) { return owner.withOwnRecord(body) }
        return withOwnRecord(body)
    }

    /// Runs `body` on the life whose deadline the call's waits watch (its own, its parent's, or
    /// ``never``'s), under that record's lock.
    @inline(__always)
    func withLifecycle<R>(_ body: (inout CallLifecycle) -> R) -> R {
        if let owner = fixed({ $0.pointee.deadlineOwner }) { return owner.withOwnRecord { body(&$0.lifecycle) } }
        return withOwnRecord { body(&$0.lifecycle) }
    }

    /// Whether the call has no deadline (its waits watch ``never``'s).
    var hasNoDeadline: Bool {
        if let owner = fixed({ $0.pointee.deadlineOwner }) { return owner == .never }
        return self == .never
    }

    /// The call's deadline as a cancellation source (a view of this owner).
    @inline(__always)
    var deadline: CallDeadline { CallDeadline(self) }

    /// A part of this call run beside it (a hedged copy) or after its answer (a background
    /// revalidation): a record of its own (its figures are not the call's), this call's deadline,
    /// and the internals without the progress meter (its bytes are not the call's).
    func attempt() -> RunningCall {
        let transport = withRecord { $0.metrics.transport }
        return Self.make(
            transport: transport, internals: internals.withoutProgress(), deadline: .of(fixed { $0.pointee.deadlineOwner } ?? self))
    }

    /// One connection of a long call (a download's, an event stream's: see ``LongCall``): a record
    /// and a deadline of its own (its head's, then its body's stall limit), released against the
    /// clock only (the long call holds the place among the running calls), with the call's
    /// internals. ``LongCall`` ends it when the call's deadline passes.
    func connection() -> RunningCall {
        let transport = withRecord { $0.metrics.transport }
        return Self.make(transport: transport, internals: internals, deadline: .own, clock: fixed { $0.pointee.clock })
    }

    /// An owner that writes `record`'s record and nothing more: no deadline, no internals. What a
    /// context made outside a client (``RequestContext/init(requestID:team:deadline:maxResponseBytes:secretHeaderNames:logger:recorder:httpVersion:)``)
    /// holds, whoever's recorder it was given: `record` itself when it is such an owner already.
    static func standalone(writing record: RunningCall) -> RunningCall {
        let isStandalone = record.fixed { $0.pointee.deadlineOwner == .never && $0.pointee.internals === LinkContext.none }
        if isStandalone { return record }
        return make(transport: "", internals: .none, deadline: .none, recordOwner: record.fixed { $0.pointee.recordOwner } ?? record)
    }

    /// This owner writing `record`'s record instead of its own, with the same deadline and
    /// internals (a context whose recorder is replaced, ``RequestContext/recorder``).
    func writing(_ record: RunningCall) -> RunningCall {
        fixed { parts in
            Self.make(
                transport: "", internals: parts.pointee.internals, deadline: .of(parts.pointee.deadlineOwner ?? self),
                recordOwner: record.fixed { $0.pointee.recordOwner } ?? record)
        }
    }

    /// The transfer identical calls share (see ``QueueGate``): it writes this call's record (the
    /// first caller's) and has no deadline: it runs until the last caller leaves, each at its own
    /// deadline.
    func sharedTransfer() -> RunningCall {
        Self.make(transport: "", internals: internals, deadline: .none, recordOwner: fixed { $0.pointee.recordOwner } ?? self)
    }

    /// The call is admitted: it holds its place and its alarm until it ends, and moves to `phase`
    /// with `change` to its metrics, under one lock (see ``CallLifecycle/admit(_:)``).
    func admit(_ holdings: CallLifecycle.Holdings, entering phase: NetworkError.Phase, _ change: (inout RequestMetrics) -> Void) {
        withRecord { record in
            record.lifecycle.admit(holdings, entering: phase)
            change(&record.metrics)
        }
    }

    /// Stops the deadline's alarm before the call ends: a long transfer's body goes on under its
    /// own bounds (``BodyWatch``). Idempotent.
    func disarm() {
        guard let alarm = withOwnRecord({ $0.lifecycle.alarm }) else { return }
        fixed { _ = $0.pointee.clock?.cancelAlarm(alarm) }
    }

    /// Ends the call: the one place it ends. The first time, its lifecycle ends (handlers dropped,
    /// outside the lock), the alarm is removed and the place among the running calls left; later
    /// calls do nothing. (An owner whose deadline is another's holds neither: its end only closes
    /// its own lifecycle.)
    func end() {
        guard let release = withOwnRecord({ $0.lifecycle.end() }) else { return }
        // The handlers are released here, outside the lock: their captures may run deinitializers.
        guard let holdings = release.holdings else { return }
        fixed { parts in
            if let alarm = holdings.alarm { _ = parts.pointee.clock?.cancelAlarm(alarm) }
            parts.pointee.admission?.leave(holdings.slot)
        }
    }
}
