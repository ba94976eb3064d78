/// Polls `condition` every few milliseconds until it holds or `timeout` passes.
///
/// For tests that wait on work finishing elsewhere (a completion handler on another queue):
/// the timeout bounds the wait, it is not an assertion about speed. It only catches a hang, so it
/// is generous: with the whole suite on two cores, CPU-heavy cases can hold the cooperative pool
/// for seconds (a passing case never waits for it).
/// - Parameters:
///   - timeout: The longest wait; 60 seconds by default.
///   - condition: What to wait for.
/// - Returns: Whether the condition held before the timeout.
public func eventually(timeout: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
