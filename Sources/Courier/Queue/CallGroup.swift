/// Which calls ``RequestQueue/cancelAll(_:)`` cancels.
public enum CallGroup: Sendable, Hashable {
    /// Calls whose API object or endpoint carries the tag (see `BaseAPI.tags`).
    case tag(String)
    /// Calls of the team.
    case team(String)
    /// Calls that belong to the batch.
    case batch(BatchID)
    /// Every call of the queue.
    case all
}

/// Identifies one ``Batch``, for ``CallGroup/batch(_:)``.
public struct BatchID: Sendable, Hashable, CustomStringConvertible {
    let value: UInt64

    /// A new id, unique in this process.
    static func next() -> BatchID {
        BatchID(
            value: counter.withLock { count -> UInt64 in
                count &+= 1
                return count
            })
    }

    private static let counter = Locked<UInt64>(0)

    /// `batch-N`.
    public var description: String { "batch-\(value)" }
}

/// What a running call belongs to, for group cancellation.
struct CallMembership: Sendable {
    var tags: Set<String> = []
    var team: String?
    var batch: BatchID?

    func belongs(to group: CallGroup) -> Bool {
        switch group {
        case .tag(let tag): tags.contains(tag)
        case .team(let team): self.team == team
        case .batch(let batch): self.batch == batch
        case .all: true
        }
    }
}

/// Where one call waits and how: carried in the ``RequestContext`` from the client to the queue's
/// gate between application and network middleware.
struct QueuePlacement: Sendable {
    var queue: RequestQueue
    var priority: RequestPriority
    var deduplication: Deduplication
    /// Called each time the call leaves the queue (once per attempt); `Batch` counts only the first.
    var onStart: (@Sendable () -> Void)?
}
