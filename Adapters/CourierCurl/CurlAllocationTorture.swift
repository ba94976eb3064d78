import CCurl
import Synchronization

/// A test hook in the manner of curl's torture tests: libcurl allocates through a counting
/// allocator, and the Nth allocation from a given moment fails, so libcurl reports
/// `CURLE_OUT_OF_MEMORY` from whichever call needed it. For tests in a process of their own
/// (`CourierAllocationProbe`); never used otherwise.
///
/// Every use of the shim's allocator functions stays in this file: they and their counters are
/// `static` in a C header, so each Swift file that calls them gets copies of its own.
package enum CurlAllocationTorture {
    private static let installed = Atomic<Bool>(false)

    /// Whether ``install()`` was called.
    static var isInstalled: Bool { installed.load(ordering: .acquiring) }

    /// Gives libcurl the counting allocator. Call it before any curl transport exists in the
    /// process (libcurl takes its allocator once, at global initialisation).
    package static func install() {
        installed.store(true, ordering: .releasing)
    }

    /// `curl_global_init` with the counting allocator.
    static func globalInit() -> CURLcode {
        ccurl_global_init_counting(Int(CURL_GLOBAL_ALL))
    }

    /// Fails the allocation `count` allocations from now (0: the next one), once; `nil`: none.
    package static func failAllocation(after count: Int?) {
        ccurl_alloc_fail_after(count ?? -1)
    }

    /// Allocations failed on purpose so far.
    package static var failures: Int { ccurl_alloc_failures() }

    /// Blocks libcurl holds now.
    package static var outstanding: Int { ccurl_alloc_outstanding() }
}
