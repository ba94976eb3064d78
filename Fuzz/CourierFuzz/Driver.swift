// The entry point: libFuzzer's driver with the target named by `COURIER_FUZZ_TARGET`.
//
// SwiftPM names an executable's entry point `CourierFuzz_main` and points `main` at it, so the
// driver is started from there (`LLVMFuzzerRunDriver`) rather than from libFuzzer's own `main`.
import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target chosen for this process.
nonisolated(unsafe) private var chosen: FuzzTarget?

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let chosen else { return 0 }
    let bytes = data.map { UnsafeBufferPointer(start: $0, count: size) } ?? UnsafeBufferPointer(start: nil, count: 0)
    chosen.run(bytes)
    return 0
}

@_cdecl("CourierFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    let name = ProcessInfo.processInfo.environment["COURIER_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.all.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(
            Data("set COURIER_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", "))\n".utf8))
        return 2
    }
    chosen = target
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { testOneInput($0, $1) }
}
