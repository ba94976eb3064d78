import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file a download writes before it replaces its destination, and the note that lets a later
/// download of the same resource to the same destination go on from it.
///
/// Both sit beside the destination: `.<name>.part` (the bytes) and `.<name>.part-info` (the
/// resource's fingerprint, the validator `If-Range` sends and the total first announced). The part
/// file is opened without following a link, mode 0600, and taken over only when it is a regular
/// file of this user with one link and no access for others; otherwise it is replaced. A download
/// holds an exclusive lock on it while it runs; a second download to the same destination at the
/// same time writes a private part file of its own, which no later run resumes.
struct PartialFile {
    /// What a previous run left that this download may go on from.
    struct Left: Equatable {
        var validator: String
        var total: Int64?
        var bytes: Int64
    }

    let path: String
    let infoPath: String?
    let handle: FileHandle
    /// The fingerprint of what is downloaded (method and URL), so a part file never continues
    /// another resource.
    let resource: String
    /// What a previous run left, when it matches this resource and is sound.
    private(set) var left: Left?

    /// The longest note read.
    static let maxInfoBytes = 4096

    /// Opens the part file for `destination`, taking over what a previous run left when `resumes`.
    static func open(for destination: URL, resource: String, resumes: Bool) throws(NetworkError) -> PartialFile {
        let directory = destination.deletingLastPathComponent().path
        let name = destination.lastPathComponent
        let shared = directory + "/." + name + ".part"
        let info = shared + "-info"
        if let descriptor = openShared(shared) {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            var file = PartialFile(path: shared, infoPath: info, handle: handle, resource: resource)
            file.left = resumes ? file.readLeft(size: Self.size(of: descriptor)) : nil
            if let left = file.left, lseek(descriptor, off_t(left.bytes), SEEK_SET) == off_t(left.bytes) { return file }
            try file.reset()
            return file
        }
        // Another download holds the shared one (or it cannot be used): a private file.
        let own = directory + "/." + name + ".\(UInt64.random(in: 0...UInt64.max)).part"
        let descriptor = Glibc.open(own, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .invalidRequest("the download cannot write a file in \(directory): \(String(cString: strerror(errno)))")
        }
        return PartialFile(
            path: own, infoPath: nil, handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), resource: resource)
    }

    /// The shared part file, locked, when it is (or can be made) a private regular file.
    private static func openShared(_ path: String) -> Int32? {
        for _ in 0..<2 {
            let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                // A link or something else in its place: removed once, then made anew.
                guard errno == ELOOP, unlink(path) == 0 else { return nil }
                continue
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                return nil
            }
            if (status.st_mode & S_IFMT) == S_IFREG, status.st_uid == geteuid(), status.st_nlink == 1, status.st_mode & 0o077 == 0 {
                return descriptor
            }
            // Not ours alone: never written through; removed and made anew.
            close(descriptor)
            guard unlink(path) == 0 else { return nil }
        }
        return nil
    }

    private static func size(of descriptor: Int32) -> Int64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int64(status.st_size) : 0
    }

    private init(path: String, infoPath: String?, handle: FileHandle, resource: String) {
        self.path = path
        self.infoPath = infoPath
        self.handle = handle
        self.resource = resource
    }

    /// The note's lines: the resource, the validator, the total (or empty).
    private func readLeft(size: Int64) -> Left? {
        guard size > 0, let infoPath, let data = FileManager.default.contents(atPath: infoPath), data.count <= Self.maxInfoBytes,
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 3, lines[0] == resource, !lines[1].isEmpty else { return nil }
        let total = lines[2].isEmpty ? nil : Int64(lines[2])
        guard lines[2].isEmpty || total != nil, total.map({ size < $0 }) ?? true else { return nil }
        return Left(validator: lines[1], total: total, bytes: size)
    }

    /// Empties the file and forgets the note.
    mutating func reset() throws(NetworkError) {
        left = nil
        if let infoPath { unlink(infoPath) }
        do {
            try handle.truncate(atOffset: 0)
            try handle.seek(toOffset: 0)
        } catch {
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be reset: \(error)")
        }
    }

    /// Writes the note a later run reads (`validator` `nil`: none, nothing to go on from): a
    /// temporary file renamed into place, so a reader sees a whole note or none.
    func record(validator: String?, total: Int64?) {
        guard let infoPath else { return }
        guard let validator, !validator.contains("\n") else {
            unlink(infoPath)
            return
        }
        let temporary = infoPath + ".\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let text = Array("\(resource)\n\(validator)\n\(total.map(String.init) ?? "")".utf8)
        let written = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if written != text.count || rename(temporary, infoPath) != 0 { unlink(temporary) }
    }

    /// Reads the bytes already in the file into `digest` (a checksum over the whole file).
    func hashExisting(into digest: inout SHA256Digest, bytes: Int64) throws(NetworkError) {
        do {
            try handle.seek(toOffset: 0)
            var remaining = bytes
            while remaining > 0, let chunk = try handle.read(upToCount: Int(min(remaining, 1 << 20))), !chunk.isEmpty {
                chunk.withUnsafeBytes { digest.update($0) }
                remaining -= Int64(chunk.count)
            }
            try handle.seek(toOffset: UInt64(bytes))
        } catch {
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be read: \(error)")
        }
    }

    /// Ends a download that failed: the file and its note stay for a later run when `keeping`,
    /// else both are removed.
    func abandon(keeping: Bool) {
        try? handle.close()
        if !keeping || infoPath == nil {
            unlink(path)
            if let infoPath { unlink(infoPath) }
        }
    }

    /// Makes the whole file the destination: synced, given the destination's mode (or `mode` for
    /// a new one), renamed over it atomically; the note removed.
    func commit(to destination: URL, mode: mode_t) throws(NetworkError) {
        var status = stat()
        let kept = stat(destination.path, &status) == 0 ? status.st_mode & 0o777 : mode
        do {
            try handle.synchronize()
        } catch {
            abandon(keeping: false)
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be written: \(error)")
        }
        // Renamed while still open and locked: no other download takes the finished file over.
        let changed = fchmod(handle.fileDescriptor, kept)
        let failure = String(cString: strerror(errno))
        // rename(2) replaces the destination atomically: a reader sees the old file or the new one.
        guard changed == 0, rename(path, destination.path) == 0 else {
            let reason = changed == 0 ? String(cString: strerror(errno)) : failure
            abandon(keeping: false)
            throw NetworkError(
                kind: .invalidRequest, phase: .receiving, message: "the download could not be moved to \(destination.path): \(reason)")
        }
        if let infoPath { unlink(infoPath) }
        try? handle.close()
    }
}
