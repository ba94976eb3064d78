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
/// (queue placement, cache, retry budget, body reading, progress meter: ``ChainInternals``) and
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
        let internals: ChainInternals
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

    /// A call's owner.
    /// - Parameters:
    ///   - transport: The transport's name, for its metrics.
    ///   - internals: The chain's internals for the call.
    ///   - admission: The client's running calls, which the call enters when it opens.
    ///   - clock: The deadline's clock.
    ///   - deadlineOwner: Whose deadline it runs under, when not its own (``never``: none).
    ///   - recordOwner: Whose record it writes, when not its own.
    ///   - lifecycle: Its life's starting point (``never`` sets `isNever`).
    static func make(
        transport: String, internals: ChainInternals, admission: CallAdmission? = nil, clock: (any TimeSource)? = nil,
        deadlineOwner: RunningCall? = RunningCall.never, recordOwner: RunningCall? = nil, lifecycle: CallLifecycle = CallLifecycle()
    ) -> RunningCall {
        // (Built in the closure: the parts are made in place, not copied into the buffer.)
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
        return make(transport: "", internals: .none, deadlineOwner: nil, lifecycle: lifecycle)
    }()

    /// A client's call: its own deadline, released at its end against `admission` and `clock`.
    static func call(transport: String, internals: ChainInternals, admission: CallAdmission, clock: any TimeSource) -> RunningCall {
        make(transport: transport, internals: internals, admission: admission, clock: clock, deadlineOwner: nil)
    }

    /// The chain's internals: fixed, read without the lock.
    @inline(__always)
    var internals: ChainInternals { storage.header.internals }

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
        if let owner = storage.header.recordOwner { return owner.withOwnRecord(body) }
        return withOwnRecord(body)
    }

    /// Runs `body` on the life whose deadline the call's waits watch (its own, its parent's, or
    /// ``never``'s), under that record's lock.
    @inline(__always)
    func withLifecycle<R>(_ body: (inout CallLifecycle) -> R) -> R {
        if let owner = storage.header.deadlineOwner { return owner.withOwnRecord { body(&$0.lifecycle) } }
        return withOwnRecord { body(&$0.lifecycle) }
    }

    /// Whether the call has no deadline (its waits watch ``never``'s).
    var hasNoDeadline: Bool {
        if let owner = storage.header.deadlineOwner { return owner == .never }
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
            transport: transport, internals: internals.withoutProgress(), deadlineOwner: storage.header.deadlineOwner ?? self)
    }

    /// The transfer identical calls share (see ``QueueGate``): it writes this call's record (the
    /// first caller's) and has no deadline: it runs until the last caller leaves, each at its own
    /// deadline.
    func sharedTransfer() -> RunningCall {
        Self.make(transport: "", internals: internals, deadlineOwner: .never, recordOwner: storage.header.recordOwner ?? self)
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
        storage.withUnsafeMutablePointerToHeader { _ = $0.pointee.clock?.cancelAlarm(alarm) }
    }

    /// Ends the call: the one place it ends. The first time, its lifecycle ends (handlers dropped,
    /// outside the lock), the alarm is removed and the place among the running calls left; later
    /// calls, and calls on an owner whose deadline is another's, do nothing.
    func end() {
        guard let release = withOwnRecord({ $0.lifecycle.end() }) else { return }
        // The handlers are released here, outside the lock: their captures may run deinitializers.
        guard let holdings = release.holdings else { return }
        storage.withUnsafeMutablePointerToHeader { parts in
            _ = parts.pointee.clock?.cancelAlarm(holdings.alarm)
            parts.pointee.admission?.leave(holdings.slot)
        }
    }
}
