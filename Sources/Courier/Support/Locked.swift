import Foundation

/// A value that can only be reached while holding its lock.
///
/// Courier uses this rather than `Synchronization.Mutex`: on Linux, `Mutex` parks threads with a
/// raw futex that ThreadSanitizer does not see, so every contended access inside `withLock` is
/// reported as a race. This lock is a pthread mutex (through `NSLock`), which the sanitizers
/// understand, so `swift test --sanitize=thread` reports only real races.
///
/// Never call out to unknown code (completions, continuations, user closures) inside `withLock`:
/// take what you need out, unlock, then call.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written between `lock()` and `unlock()`.
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock around an initial value.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
