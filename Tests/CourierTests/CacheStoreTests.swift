import Foundation
import HTTPTypes
import Testing

@testable import Courier
@testable import CourierCache

/// The stores behind `ResponseCache`: bounds, eviction, and the checked byte form on disk.
@Suite("Response cache stores")
struct CacheStoreTests {
    static func entry(_ key: String, bytes: Int = 100, status: Int = 200) -> CachedResponse {
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        fields[.eTag] = "\"\(key)\""
        return CachedResponse(
            key: key, status: status, headerFields: fields, body: Data(repeating: 0x61, count: bytes), requestTime: 1_000,
            responseTime: 1_001, vary: VaryKey(names: ["accept-language"], values: ["en"]))
    }

    @Test("memory: the least recently used entry goes first, by entries and by bytes")
    func memoryEviction() {
        let store = MemoryCacheStore(maxBytes: 10_000, maxEntries: 3)
        for key in ["a", "b", "c"] { store.store(Self.entry(key)) }
        _ = store.response(for: "a")  // a is now the most recently used
        store.store(Self.entry("d"))
        #expect(store.response(for: "b") == nil, "b was the least recently used")
        #expect(store.response(for: "a") != nil && store.response(for: "c") != nil && store.response(for: "d") != nil)
        #expect(store.count == 3)

        store.store(Self.entry("big", bytes: 9_000))
        #expect(store.response(for: "big") != nil)
        #expect(store.bytes <= 10_000)
        store.store(Self.entry("huge", bytes: 20_000))
        #expect(store.response(for: "huge") == nil, "larger than the whole store: not kept")
        store.remove("big")
        #expect(store.response(for: "big") == nil)
        #expect(store.bytes == (store.count == 0 ? 0 : store.bytes))
    }

    @Test("the byte form reads back the same, and any truncation or altered byte is rejected")
    func encoding() throws {
        let entry = Self.entry("GET https://example.test/a", bytes: 300)
        let data = entry.encoded()
        #expect(CachedResponse(encoded: data) == entry)
        for cut in [0, 3, 8, 20, data.count / 2, data.count - 9, data.count - 1] {
            #expect(CachedResponse(encoded: data.prefix(cut)) == nil, "cut at \(cut)")
        }
        for index in stride(from: 0, to: data.count, by: 37) {
            var altered = data
            altered[index] ^= 0x5a
            #expect(CachedResponse(encoded: altered) == nil, "byte \(index) altered")
        }
        #expect(CachedResponse(encoded: Data("not an entry at all, but long enough".utf8)) == nil)
    }

    @Test("disk: entries survive a new store on the directory; a corrupt or truncated file is a miss and is removed")
    func disk() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try DiskCacheStore(directory: directory)
        let entry = Self.entry("GET https://example.test/b")
        store.store(entry)
        #expect(try DiskCacheStore(directory: directory).response(for: entry.key) == entry)

        let path = store.path(for: entry.key)
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        try whole.prefix(whole.count - 5).write(to: URL(fileURLWithPath: path))
        #expect(store.response(for: entry.key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path), "the broken entry is removed")

        store.store(entry)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path))
        #expect(store.response(for: entry.key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))

        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!leftovers.contains { $0.contains(".tmp-") }, "no temporary file is left behind")
    }

    @Test("disk: bounded by bytes, the entries written first are removed first")
    func diskBound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try DiskCacheStore(directory: directory, maxBytes: 5_000)
        for index in 0..<10 {
            store.store(Self.entry("k\(index)", bytes: 1_000))
            // Modification times must differ for the order to be defined.
            let path = store.path(for: "k\(index)")
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000 + Double(index))], ofItemAtPath: path)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(DiskCacheStore.suffix) }
        let total = try files.reduce(0) { sum, name in
            sum + ((try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?.intValue ?? 0)
        }
        #expect(total <= 5_000)
        #expect(store.response(for: "k9") != nil, "the newest entry stays")
        #expect(store.response(for: "k0") == nil, "the oldest went first")
    }

    @Test("trimming removes temporary files a crash left behind, and nothing else that is not an entry")
    func leftovers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try DiskCacheStore(directory: directory, maxBytes: 1 << 20)
        let old = directory + "/0123456789abcdef" + DiskCacheStore.suffix + ".tmp-42"
        let recent = directory + "/fedcba9876543210" + DiskCacheStore.suffix + ".tmp-43"
        let foreign = directory + "/notes.txt"
        for path in [old, recent, foreign] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old)
        store.trim()
        #expect(!FileManager.default.fileExists(atPath: old), "a temporary file two hours old is a crash's leftover")
        #expect(FileManager.default.fileExists(atPath: recent), "a recent one may be a write in progress")
        #expect(FileManager.default.fileExists(atPath: foreign), "files that are not the store's are left alone")
    }

    @Test("a directory that cannot be used is a configuration error naming the key")
    func badDirectory() {
        #expect(throws: ConfigurationError.self) { try DiskCacheStore(directory: "/proc/self/no-such/cache") }
        #expect(throws: ConfigurationError.self) { try DiskCacheStore(directory: NSTemporaryDirectory(), maxBytes: 0) }
    }

    @Test("the directory and its files are the owner's alone; a shared or linked directory is refused")
    func permissions() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-perm-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/nested/cache"
        let store = try DiskCacheStore(directory: directory)
        var status = stat()
        #expect(stat(directory, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700)
        let entry = Self.entry("GET http://a.test/x")
        store.store(entry)
        #expect(stat(store.path(for: entry.key), &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)

        // Group- or world-writable: another account could plant or read entries.
        let shared = root + "/shared"
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o777) == 0)
        let refusal = #expect(throws: ConfigurationError.self) { try DiskCacheStore(directory: shared) }
        #expect(refusal?.key == "cache.directory")
        #expect(chmod(shared, 0o770) == 0)
        #expect(throws: ConfigurationError.self) { try DiskCacheStore(directory: shared) }
        // Readable by others (what earlier versions made): tightened, and a readable entry is a miss.
        #expect(chmod(shared, 0o755) == 0)
        let earlier = try DiskCacheStore(directory: shared)
        #expect(stat(shared, &status) == 0 && status.st_mode & 0o777 == 0o700)
        earlier.store(entry)
        #expect(chmod(earlier.path(for: entry.key), 0o644) == 0)
        #expect(earlier.response(for: entry.key) == nil)
        #expect(!FileManager.default.fileExists(atPath: earlier.path(for: entry.key)))

        // A link to a directory is not followed.
        let link = root + "/link"
        #expect(symlink(directory, link) == 0)
        #expect(throws: ConfigurationError.self) { try DiskCacheStore(directory: link) }
        // Nor is a link planted where an entry goes.
        let target = root + "/elsewhere"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("secret".utf8)))
        let other = Self.entry("GET http://a.test/y")
        #expect(symlink(target, store.path(for: other.key)) == 0)
        #expect(store.response(for: other.key) == nil)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "secret")
    }

    @Test("disk: a Vary entry holds no value of the fields it varied by; every store on the directory shares one key")
    func diskVaryFingerprints() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try ResponseCache(store: DiskCacheStore(directory: directory))
        let second = try ResponseCache(store: DiskCacheStore(directory: directory))
        #expect(first.varyKey == second.varyKey, "a second process reads the first one's key")
        var request = HTTPFields()
        request[.cookie] = "session=s3cr3t-cookie"
        request[HTTPField.Name("X-Api-Key")!] = "key-0123456789"
        let vary = try #require(VaryKey(vary: ["Cookie, X-Api-Key"], request: request, key: first.varyKey))
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        let entry = CachedResponse(
            key: "GET https://example.test/v", status: 200, headerFields: fields, body: Data("body".utf8), requestTime: 1, responseTime: 2,
            vary: vary)
        first.store.store(entry)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(DiskCacheStore.suffix) }
        #expect(files.count == 1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + files[0]))
        for value in ["s3cr3t-cookie", "key-0123456789"] {
            #expect(bytes.range(of: Data(value.utf8)) == nil, "\(value) was written to disk")
        }
        let read = try #require(second.store.response(for: entry.key))
        #expect(read.vary?.matches(request, key: second.varyKey) == true)
        var other = request
        other[.cookie] = "session=another"
        #expect(read.vary?.matches(other, key: second.varyKey) == false)
        var status = stat()
        #expect(stat(directory + "/" + DiskCacheStore.keyFile, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        // A key file of another shape is replaced, and the cache stays usable.
        #expect(FileManager.default.createFile(atPath: directory + "/" + DiskCacheStore.keyFile, contents: Data("short".utf8)))
        let third = try DiskCacheStore(directory: directory)
        #expect(third.varyKey != first.varyKey)
        #expect(try DiskCacheStore(directory: directory).varyKey == third.varyKey, "the replacement is kept")
    }
}
