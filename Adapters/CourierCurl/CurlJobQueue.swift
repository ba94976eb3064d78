/// The task steps waiting to run on the curl engine's thread, in the order they were enqueued.
///
/// Engine thread only: steps from other threads arrive through the engine's inbox. The engine
/// takes a batch out before running it, because a running step may enqueue more.
struct CurlJobQueue {
    /// At most this many steps run per round of the engine's loop, so that steps which keep
    /// enqueueing steps cannot keep the engine from its sockets.
    static let stepsPerRound = 1024

    private var waiting: [UnownedJob] = []
    /// The buffer of the batch taken last, reused for the next steps.
    private var spare: [UnownedJob] = []

    /// Whether no step waits.
    var isEmpty: Bool { waiting.isEmpty }

    /// Adds a step at the end.
    mutating func append(_ job: UnownedJob) {
        waiting.append(job)
    }

    /// Takes every waiting step out, oldest first.
    mutating func takeBatch() -> [UnownedJob] {
        spare.removeAll(keepingCapacity: true)
        swap(&waiting, &spare)
        return spare
    }

    /// Puts steps that did not get to run back in front of those enqueued meanwhile.
    mutating func putBack(_ steps: ArraySlice<UnownedJob>) {
        waiting.insert(contentsOf: steps, at: 0)
    }
}
