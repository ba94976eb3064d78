import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file a download writes before it replaces its destination, and the note that lets a later
/// download of the same resource to the same destination go on from it.
///
/// Both sit beside the destination: `.<name>.part` (the bytes) and `.<name>.part-info` (the
/// resource's fingerprint, the validator `If-Range` sends and the total first announced). Each is
/// opened without following a link and taken over only when it is a regular file of this user
/// with one link and no access for others (0600); a part file that is not is replaced, a note that
/// is not is ignored, and a part file whose note cannot be written is not kept. A download holds
/// an exclusive lock on the part file while it runs, and checks that its path still names it; a
/// second download to the same destination at the same time writes a private part file of its
/// own, which no later run resumes.
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
    /// Whether the note for the bytes in the file is written (or was left by a previous run).
    private var noted = false

    /// The longest note read.
    static let maxInfoBytes = 4096

    /// Opens the part file for `destination`, taking over what a previous run left when `resumes`
    /// (without it, any note is removed and none is written).
    static func open(for destination: URL, resource: String, resumes: Bool) throws(NetworkError) -> PartialFile {
        let directory = destination.deletingLastPathComponent().path
        let shared = directory + "/" + partName(for: destination.lastPathComponent)
        let info = shared + "-info"
        if !resumes { unlink(info) }
        if let descriptor = openShared(shared) {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            var file = PartialFile(path: shared, infoPath: resumes ? info : nil, handle: handle, resource: resource)
            file.left = file.readLeft(size: Self.size(of: descriptor))
            if let left = file.left, lseek(descriptor, off_t(left.bytes), SEEK_SET) == off_t(left.bytes) {
                file.noted = true
                return file
            }
            try file.reset()
            return file
        }
        // Another download holds the shared one (or it cannot be used): a private file.
        let own = directory + "/" + partName(for: destination.lastPathComponent, unique: UInt64.random(in: 0...UInt64.max))
        let descriptor = Glibc.open(own, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .invalidRequest("the download cannot write a file in \(directory): \(String(cString: strerror(errno)))")
        }
        return PartialFile(
            path: own, infoPath: nil, handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), resource: resource)
    }

    /// `.<name>.part` (or `.<name>.<unique>.part`); a long name is cut and made unique with a
    /// digest of it, so the part file and its note's temporary name stay within a file name's 255
    /// bytes.
    static func partName(for name: String, unique: UInt64? = nil) -> String {
        var stem = name
        if name.utf8.count > 160 {
            var digest = SHA256Digest()
            digest.update(name.utf8)
            stem =
                String(decoding: name.utf8.prefix(100), as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "")
                + "-" + digest.hex().prefix(16)
        }
        return "." + stem + (unique.map { ".\($0)" } ?? "") + ".part"
    }

    /// Whether a file is this user's alone: a regular file with one link and no access for others.
    static func isPrivate(_ status: stat) -> Bool {
        (status.st_mode & S_IFMT) == S_IFREG && status.st_uid == geteuid() && status.st_nlink == 1 && status.st_mode & 0o077 == 0
    }

    /// The shared part file, locked, when it is (or can be made) a private regular file, and still
    /// the file its path names once locked (a download that finished renames its part file away).
    private static func openShared(_ path: String) -> Int32? {
        for _ in 0..<3 {
            let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                // A link in its place: removed (when this user may), then made anew.
                guard errno == ELOOP, unlink(path) == 0 else { return nil }
                continue
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                return nil
            }
            var named = stat()
            guard lstat(path, &named) == 0, named.st_dev == status.st_dev, named.st_ino == status.st_ino else {
                close(descriptor)
                continue
            }
            if isPrivate(status) { return descriptor }
            // Not ours alone: never written through; removed while locked (the path still names
            // it), then made anew.
            let removed = unlink(path) == 0
            close(descriptor)
            guard removed else { return nil }
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

    /// The note's text, when it is this user's private file (never through a link).
    private func readNote() -> String? {
        guard let infoPath else { return nil }
        let descriptor = Glibc.open(infoPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, Self.isPrivate(status), status.st_size <= Self.maxInfoBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: Self.maxInfoBytes)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// The note's lines: the resource, the validator, the total (or empty).
    private func readLeft(size: Int64) -> Left? {
        guard size > 0, let text = readNote() else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 3, lines[0] == resource, !lines[1].isEmpty else { return nil }
        let total = lines[2].isEmpty ? nil : Int64(lines[2])
        guard lines[2].isEmpty || total != nil, total.map({ size < $0 }) ?? true else { return nil }
        return Left(validator: lines[1], total: total, bytes: size)
    }

    /// Empties the file and forgets the note.
    mutating func reset() throws(NetworkError) {
        left = nil
        noted = false
        if let infoPath { unlink(infoPath) }
        do {
            try handle.truncate(atOffset: 0)
            try handle.seek(toOffset: 0)
        } catch {
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be reset: \(error)")
        }
    }

    /// Writes the note a later run reads (`validator` `nil`: none, nothing to go on from): a
    /// temporary file renamed into place, so a reader sees a whole note or none. A part file whose
    /// note could not be written is not kept.
    mutating func record(validator: String?, total: Int64?) {
        noted = false
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
        if written == text.count, rename(temporary, infoPath) == 0 {
            noted = true
        } else {
            unlink(temporary)
        }
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

    /// Ends a download that failed: the file and its note stay for a later run when `keeping` and
    /// the note is written, else both are removed.
    func abandon(keeping: Bool) {
        try? handle.close()
        if !keeping || !noted {
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

extension RepeatPlan {
    /// A fingerprint of the request's method and URL (a URL may carry a key in its query): what a
    /// download's part file belongs to.
    var resource: String {
        var digest = SHA256Digest()
        digest.update(target.utf8)
        return digest.hex()
    }
}
