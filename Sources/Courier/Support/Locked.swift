#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that can only be reached while holding its lock.
///
/// Courier uses this rather than `Synchronization.Mutex`: on Linux, `Mutex` parks threads with a
/// raw futex that ThreadSanitizer does not see, so every contended access inside `withLock` is
/// reported as a race. This lock is a pthread mutex, which the sanitizers understand, so
/// `swift test --sanitize=thread` reports only real races.
///
/// The value and the mutex live in one allocation (a `ManagedBuffer`), so making one costs a
/// single `malloc`: several are made per call (the transfer recorder, a response's body buffer).
///
/// Copies share the same value and lock, like references to one object.
///
/// Never call out to unknown code (completions, continuations, user closures) inside `withLock`:
/// take what you need out, unlock, then call. The lock is not reentrant: `withLock` inside
/// `withLock` on the same value deadlocks.
///
/// It is `Sendable` whatever `Value` is, like a lock around state the owner reaches only through
/// it: the compiler does not check what leaves `withLock`. Keep a reference type that is not
/// `Sendable` inside (copy out values, not references), as `Synchronization.Mutex` enforces.
public struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is only read or written between lock and unlock.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    /// Creates the lock around an initial value.
    public init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in value }
        storage = unsafeDowncast(buffer, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let code = pthread_mutex_init(mutex, nil)
            // Only fails for lack of memory or a bad attribute (there is none here).
            precondition(code == 0, "pthread_mutex_init failed with \(code)")
        }
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            let locked = pthread_mutex_lock(mutex)
            // A default mutex fails only when misused (destroyed, or not initialised): a bug here.
            precondition(locked == 0, "pthread_mutex_lock failed with \(locked)")
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                precondition(unlocked == 0, "pthread_mutex_unlock failed with \(unlocked)")
            }
            return try body(&value.pointee)
        }
    }
}
