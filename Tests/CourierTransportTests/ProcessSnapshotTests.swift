import CourierTestServer
import Testing

@Suite("ProcessSnapshot: what is left beyond a baseline")
struct ProcessSnapshotTests {
    @Test("threads beyond the baseline count repeated names and leave out libdispatch's pool")
    func threads() {
        let start = ProcessSnapshot(descriptors: [:], threads: ["main", "worker", "worker"])
        let same = ProcessSnapshot(descriptors: [:], threads: ["worker", "main", "worker", "com.apple.root.default-qos"])
        #expect(same.threadsBeyond(start).isEmpty)
        let more = ProcessSnapshot(descriptors: [:], threads: ["main", "worker", "worker", "worker", "courier-curl"])
        #expect(more.threadsBeyond(start) == ["courier-curl", "worker"])
    }

    @Test("descriptors beyond the baseline are new ones and reused numbers that point elsewhere")
    func descriptors() {
        let start = ProcessSnapshot(descriptors: ["0": "/dev/null", "3": "socket:[1]"], threads: [])
        let later = ProcessSnapshot(descriptors: ["0": "/dev/null", "3": "socket:[9]", "7": "anon_inode:[timerfd]"], threads: ["x"])
        #expect(later.descriptorsBeyond(start) == ["fd 3 → socket:[9]", "fd 7 → anon_inode:[timerfd]"])
        #expect(later.beyond(start) == ["fd 3 → socket:[9]", "fd 7 → anon_inode:[timerfd]", "thread x"])
        #expect(start.beyond(start).isEmpty)
    }
}
