import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing a body to a file: for transports that upload from a file (URLSession stages a streamed
/// body there), streaming file parts and chunks, never the whole body in memory.
extension RequestBody {
    /// Writes the body to a new file, streaming file parts (for transports that upload from a file).
    /// A streamed body cannot be written synchronously: use ``save(to:)`` for it.
    /// - Parameter url: The file to create or replace.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` when a part cannot be read or the file cannot be written.
    public func write(to url: URL) throws(NetworkError) {
        try write(to: url, shouldStop: { false })
    }

    /// Writes any body to a new file, streamed ones included, chunk by chunk.
    /// - Parameter url: The file to create or replace.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` when a part cannot be read or the file cannot
    ///   be written; ``NetworkError/Kind/cancelled`` (and the file is removed) when the task is cancelled.
    public func save(to url: URL) async throws(NetworkError) {
        guard case .stream = storage else { return try write(to: url, shouldStop: { Task.isCancelled }) }
        let handle = try Self.newFile(at: url)
        defer { try? handle.close() }
        do {
            for try await chunk in chunks() {
                try Task.checkCancellation()
                try handle.write(contentsOf: chunk)
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            if error is CancellationError { throw NetworkError.cancelled(phase: .sending) }
            throw NetworkError.converting(error, phase: .sending)
        }
    }

    /// A new, empty file at `url` (emptying one there), open for writing: readable by its owner
    /// alone (`0600`) when it is created, and never reached through a symbolic link.
    /// - Throws: ``NetworkError/Kind/invalidRequest`` when it cannot be created.
    private static func newFile(at url: URL) throws(NetworkError) -> FileHandle {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .invalidRequest("could not create the temporary body file at \(url.path)") }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Writes the body to a new file, checking between chunks whether to give up.
    /// - Parameters:
    ///   - url: The file to create or replace.
    ///   - shouldStop: Asked before each chunk; `true` ends the write with
    ///     ``NetworkError/Kind/cancelled`` and removes the file.
    /// - Throws: ``NetworkError``.
    package func write(to url: URL, shouldStop: () -> Bool) throws(NetworkError) {
        let reader = BodyReader(storage: storage, chunkSize: 256 * 1024)
        let handle = try Self.newFile(at: url)
        defer { try? handle.close() }
        do {
            while let chunk = try reader.next() {
                if shouldStop() {
                    try? FileManager.default.removeItem(at: url)
                    throw NetworkError.cancelled(phase: .sending)
                }
                try handle.write(contentsOf: chunk)
            }
        } catch let error as NetworkError where error.kind == .cancelled {
            throw error
        } catch let error as NetworkError {
            // The reader's own failure (a file part that cannot be read, or changed size) as it is.
            try? FileManager.default.removeItem(at: url)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw NetworkError(
                kind: .invalidRequest, phase: .sending, message: "could not stage the request body: \(error)", underlying: error)
        }
    }
}
