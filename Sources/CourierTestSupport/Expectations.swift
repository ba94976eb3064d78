import Courier
import Synchronization
import Testing

/// Runs `body`, expects it to throw a ``NetworkError`` of `kind`, and returns that error.
@discardableResult
public func expectNetworkError<T>(
    _ kind: NetworkError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> NetworkError? {
    do {
        _ = try await body()
        Issue.record("expected NetworkError.\(kind), got a result", sourceLocation: sourceLocation)
        return nil
    } catch let error as NetworkError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected NetworkError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The calls observers were told about, for tests that check what a call reported and when.
public final class RecordedCalls: CallObserver {
    private let records = Mutex<[CallRecord]>([])
    /// The records so far, in the order the calls finished.
    public var all: [CallRecord] { records.withLock { $0 } }
    /// An empty record.
    public init() {}
    /// Keeps `record`.
    public func callFinished(_ record: CallRecord) { records.withLock { $0.append(record) } }
}
