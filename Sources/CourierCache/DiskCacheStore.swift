import Courier
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A ``CacheStore`` in a directory: one file per entry, bounded by bytes.
///
/// Each entry is written to a temporary file and renamed into place, so a crash never leaves half
/// an entry under a key's name, and two processes may share the directory. An entry that is
/// truncated, altered or unreadable is a miss, and its file is removed. When the directory grows
/// past ``maxBytes``, the entries written longest ago are removed until it is under 90% of it.
public final class DiskCacheStore: CacheStore {
    /// The directory.
    public let directory: String
    /// The most bytes the entry files may take together.
    public let maxBytes: Int
    /// Bytes this process believes the directory holds; `nil` until first counted (another
    /// process may have written too, so trimming counts again).
    private let knownBytes = Mutex<Int?>(nil)

    /// The files' suffix; nothing else in the directory is read or removed (but ``keyFile``).
    static let suffix = ".courier-cache"
    /// The file that keeps ``varyKey``, beside the entries (made through `<name>.tmp`).
    static let keyFile = ".courier-vary-key"
    /// The secret the entries' `Vary` values are fingerprinted with (``VaryKey``): 256 random bits
    /// in ``keyFile`` (`0600`), made by the first store in the directory and read by every later
    /// one, so processes sharing the directory match each other's entries, while the files hold
    /// no value of a `Cookie` or an API key they varied by.
    let varyKey: FingerprintKey

    /// The size a store has unless told otherwise: 256 MiB.
    public static let defaultMaxBytes = 256 << 20

    /// Opens (and creates, if needed) a store in `directory`.
    ///
    /// The entries hold answers meant for the service alone, so the directory is its user's: a
    /// missing one is created `0700` (its parents as the umask says), its files `0600`, and
    /// neither is reached through a symbolic link. An existing directory that group or others may
    /// write, or that another user owns, is refused: another account could plant or read entries.
    /// One that others may only read is made `0700`, and its entries that others could read are
    /// misses (and removed).
    /// - Parameters:
    ///   - directory: The directory; created with its parents when missing.
    ///   - maxBytes: The most bytes the entries may take together; 256 MiB by default.
    /// - Throws: `ConfigurationError` (key `cache.directory`) when the directory cannot be
    ///   created, is a symbolic link or not a directory, is not this user's, or group or others
    ///   may write it; (key `cache.maxBytes`) when `maxBytes` is not positive.
    public init(directory: String, maxBytes: Int = defaultMaxBytes) throws(ConfigurationError) {
        guard maxBytes > 0 else {
            throw ConfigurationError(key: ConfigurationKey.cacheMaxBytes.name, value: "\(maxBytes)", allowed: "more than 0", source: "code")
        }
        func refuse(_ allowed: String) -> ConfigurationError {
            ConfigurationError(key: ConfigurationKey.cacheDirectory.name, value: directory, allowed: allowed, source: "code")
        }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, (try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)) == nil {
            throw refuse("a directory whose parent can be created")
        }
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw refuse("a directory that can be created") }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw refuse("a directory, not a symbolic link or a file") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { throw refuse("a directory") }
        guard status.st_uid == geteuid() else { throw refuse("a directory owned by the user the service runs as") }
        guard status.st_mode & 0o022 == 0 else { throw refuse("a directory only its owner may write (chmod 700)") }
        // One others may read (what earlier versions made, 0755) becomes the owner's alone; its
        // entries that others could read are misses, and removed when read (``contents(of:)``).
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o700) != 0 { throw refuse("a directory whose mode can be set to 0700") }
        guard access(directory, W_OK | X_OK) == 0 else { throw refuse("a writable directory") }
        self.directory = directory
        self.maxBytes = maxBytes
        varyKey = Self.varyKey(in: directory)
    }

    /// The directory's `Vary` key: read from ``keyFile`` (the owner's alone, 32 bytes), or made
    /// there when there is none or it has another shape. Made under an exclusive lock on the
    /// directory, written whole and synced to a temporary file (never through a symbolic link),
    /// then renamed into place, so processes starting together agree on one key and a crash leaves
    /// no half key. When the directory allows none of this, a key of this process (entries that
    /// vary are then matched by this process only).
    private static func varyKey(in directory: String) -> FingerprintKey {
        let lock = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard lock >= 0 else { return FingerprintKey() }
        defer { close(lock) }
        var locked: Int32
        repeat { locked = flock(lock, LOCK_EX) } while locked != 0 && errno == EINTR
        guard locked == 0 else { return FingerprintKey() }
        defer { flock(lock, LOCK_UN) }
        let path = directory + "/" + keyFile
        if let key = readKey(at: path) { return key }
        let made = FingerprintKey()
        let temporary = path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return made }
        let words = [made.k0, made.k1, made.k2, made.k3]
        var written = 0
        while written < 32 {
            let count = words.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress.map { $0 + written }, 32 - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        let synced = written == 32 && fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            return made
        }
        return made
    }

    /// The key in `path` when it is a regular file of the owner's alone holding 32 bytes.
    private static func readKey(at path: String) -> FingerprintKey? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_mode & 0o077 == 0,
            status.st_uid == geteuid(), status.st_size == 32
        else { return nil }
        var words = [UInt64](repeating: 0, count: 4)
        var done = 0
        while done < 32 {
            let count = words.withUnsafeMutableBytes { read(descriptor, $0.baseAddress.map { $0 + done }, 32 - done) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            done += count
        }
        return FingerprintKey(words[0], words[1], words[2], words[3])
    }

    /// The file an entry is stored in: a hash of its key (the file holds the key too, so a
    /// collision is a miss, never another key's answer).
    func path(for key: String) -> String {
        let hash = CachedResponse.checksum(key.utf8)
        let hex = String(hash, radix: 16)
        return directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + Self.suffix
    }

    public func response(for key: String) -> CachedResponse? {
        let path = path(for: key)
        guard let data = contents(of: path) else { return nil }
        guard let response = CachedResponse(encoded: data) else {
            // Truncated, altered, or from another format: never served, and removed.
            unlink(path)
            return nil
        }
        return response.key == key ? response : nil
    }

    /// The whole file, or `nil` when there is none; a file that cannot be read whole, or is larger
    /// than the store may hold, is removed.
    private func contents(of path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        // Only a regular file of the owner's alone (0600, as ``store(_:)`` writes it) is an entry.
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_mode & 0o077 == 0,
            status.st_uid == geteuid(), status.st_size <= maxBytes
        else {
            unlink(path)
            return nil
        }
        let size = Int(status.st_size)
        var data = Data(count: size)
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < size {
                let count = read(descriptor, buffer.baseAddress.map { $0 + done }, size - done)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        guard complete else {
            unlink(path)
            return nil
        }
        return data
    }

    public func store(_ response: CachedResponse) {
        let data = response.encoded()
        let path = path(for: response.key)
        guard data.count <= maxBytes else { return remove(response.key) }
        let temporary = path + ".tmp-\(UInt64.random(in: 0...UInt64.max))"
        guard Self.write(data, toNewFile: temporary) else {
            unlink(temporary)
            return
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return
        }
        let total = knownBytes.withLock { known -> Int? in
            guard let bytes = known else { return nil }
            known = bytes + data.count
            return known
        }
        if total.map({ $0 > maxBytes }) ?? true { trim() }
    }

    /// Writes `data` to a file that must not exist yet (no link is followed), readable and
    /// writable by its owner alone.
    private static func write(_ data: Data, toNewFile path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return data.withUnsafeBytes { buffer -> Bool in
            var done = 0
            while done < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }

    public func remove(_ key: String) {
        unlink(path(for: key))
    }

    /// How old a temporary file must be before ``trim()`` takes it for the leftover of a crash
    /// between writing and renaming (a write in progress takes far less).
    static let abandonedTemporaryAge: TimeInterval = 3600

    /// Counts the entry files and, when they take more than ``maxBytes``, removes the ones
    /// written longest ago until they take at most 90% of it. Temporary files older than
    /// ``abandonedTemporaryAge`` are removed too.
    func trim() {
        let url = URL(fileURLWithPath: directory)
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        guard let files = try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: keys) else { return }
        var entries: [(path: String, size: Int, written: Date)] = []
        let abandonedBefore = Date(timeIntervalSinceNow: -Self.abandonedTemporaryAge)
        for file in files {
            let name = file.lastPathComponent
            guard let values = try? file.resourceValues(forKeys: Set(keys)) else { continue }
            let written = values.contentModificationDate ?? .distantPast
            if name.hasSuffix(Self.suffix) {
                entries.append((file.path, values.fileSize ?? 0, written))
            } else if name.contains(Self.suffix + ".tmp-"), written < abandonedBefore {
                unlink(file.path)
            }
        }
        var total = entries.reduce(0) { $0 + $1.size }
        if total > maxBytes {
            for entry in entries.sorted(by: { $0.written < $1.written }) where total > maxBytes / 10 * 9 {
                if unlink(entry.path) == 0 { total -= entry.size }
            }
        }
        knownBytes.withLock { $0 = total }
    }
}
