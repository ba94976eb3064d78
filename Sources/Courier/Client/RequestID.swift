import Synchronization

/// The ids of calls, for logs and tracing.
enum RequestID {
    /// A process-unique id: a random prefix drawn once per process, then a counter, both in
    /// lowercase base 32 (`0`–`9`, `a`–`v`): for example `k3v09qbm-1f`. Cheaper than a UUID per
    /// call, and still unique across processes for log correlation (40 random bits). Up to the
    /// 2^30th call of a process the id is at most 15 bytes, which Swift stores inline in the
    /// `String`: making it allocates nothing.
    static func make() -> String {
        let number = requestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let prefix = requestIDPrefix
        let digits = max(1, (UInt64.bitWidth - number.leadingZeroBitCount + 4) / 5)
        return String(unsafeUninitializedCapacity: 8 + 1 + digits) { buffer in
            var index = 0
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer[index] = UInt8(truncatingIfNeeded: prefix >> UInt64(shift))
                index += 1
            }
            buffer[index] = UInt8(ascii: "-")
            index += 1
            for shift in stride(from: (digits - 1) * 5, through: 0, by: -5) {
                buffer[index] = base32Digit(UInt8((number >> UInt64(shift)) & 0x1F))
                index += 1
            }
            return index
        }
    }

    private static func base32Digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Eight base-32 digits drawn once per process, as ASCII bytes packed into one integer (the
    /// first digit in the top byte): copied without an array's generic path.
    private static let requestIDPrefix: UInt64 = {
        let random = UInt64.random(in: 0..<(1 << 40))
        return (0..<8).reversed().reduce(0) { packed, position in
            packed << 8 | UInt64(base32Digit(UInt8((random >> UInt64(position * 5)) & 0x1F)))
        }
    }()
    private static let requestCounter = Atomic<UInt64>(0)
}
