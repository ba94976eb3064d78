import Histogram

/// Request latencies in an HdrHistogram: microseconds, 3 significant digits, up to 10 minutes.
///
/// A worker sends its whole histogram back to `courier-bench run`, which merges the repeats of a
/// row exactly (bucket by bucket) before it reads percentiles, and writes the merged histogram to
/// `--json`. The JSON form lists only the buckets that hold values, as `[value, count]` pairs where
/// `value` is the highest value the bucket stands for, plus the exact lowest and highest latency,
/// so a decoded histogram has the same buckets and the same percentiles.
public struct LatencyHistogram: Sendable, Equatable {
    /// The slowest latency kept apart from the rest; slower ones are counted at this value.
    static let highestMicroseconds: UInt64 = 600_000_000

    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: highestMicroseconds, numberOfSignificantValueDigits: .three)

    /// An empty histogram.
    public init() {}

    /// Values recorded.
    public var count: UInt64 { histogram.totalCount }

    /// Records one latency.
    mutating func record(microseconds: Double) {
        let value =
            microseconds.isFinite
            ? UInt64(Swift.max(1, Swift.min(microseconds.rounded(), Double(Self.highestMicroseconds)))) : Self.highestMicroseconds
        _ = histogram.record(value)
    }

    /// Records one latency given as a `Duration`.
    mutating func record(_ duration: Duration) {
        let parts = duration.components
        record(microseconds: Double(parts.seconds) * 1e6 + Double(parts.attoseconds) / 1e12)
    }

    /// Adds another histogram's values, bucket by bucket.
    mutating func add(_ other: LatencyHistogram) {
        histogram.add(other.histogram)
    }

    /// The histograms of several runs as one.
    static func merged(_ parts: some Sequence<LatencyHistogram>) -> LatencyHistogram {
        parts.reduce(into: LatencyHistogram()) { $0.add($1) }
    }

    /// The buckets that hold values: each bucket's highest value and its count, lowest first.
    public var buckets: [Bucket] {
        histogram.recordedValues().map { Bucket(value: $0.value, count: $0.count) }
    }

    /// One bucket: `count` latencies at most `value` microseconds (and above the bucket below).
    public struct Bucket: Sendable, Equatable {
        /// The highest latency the bucket stands for, in microseconds.
        public var value: UInt64
        /// How many latencies fell into it.
        public var count: UInt64
    }

    /// The percentiles, or ``LatencySummary/empty`` when nothing was recorded.
    public var summary: LatencySummary {
        guard histogram.totalCount > 0 else { return .empty }
        return LatencySummary(
            p50: Double(histogram.valueAtPercentile(50)), p90: Double(histogram.valueAtPercentile(90)),
            p99: Double(histogram.valueAtPercentile(99)), p999: Double(histogram.valueAtPercentile(99.9)),
            max: Double(histogram.max))
    }

    /// The latency at `percentile` (0 to 100) in microseconds, or `nil` when nothing was recorded.
    func microseconds(atPercentile percentile: Double) -> Double? {
        histogram.totalCount > 0 ? Double(histogram.valueAtPercentile(percentile)) : nil
    }

    public static func == (lhs: LatencyHistogram, rhs: LatencyHistogram) -> Bool {
        lhs.count == rhs.count && lhs.buckets == rhs.buckets
    }
}

extension LatencyHistogram: Codable {
    private enum CodingKeys: String, CodingKey {
        case unit
        case significantDigits = "significant_digits"
        case count, min, max, buckets
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let unit = try container.decode(String.self, forKey: .unit)
        guard unit == "us" else {
            throw DecodingError.dataCorruptedError(forKey: .unit, in: container, debugDescription: "expected \"us\", got \"\(unit)\"")
        }
        let pairs = try container.decode([[UInt64]].self, forKey: .buckets)
        self.init()
        // A bucket that holds the lowest or highest latency is recorded at that exact value (same
        // bucket, same count), so that percentiles at the edges (which HdrHistogram caps at the
        // largest value recorded) read as they did before encoding.
        let lowest = try container.decodeIfPresent(UInt64.self, forKey: .min)
        let highest = try container.decodeIfPresent(UInt64.self, forKey: .max)
        var pending = [lowest, highest].compactMap { $0 }
        for pair in pairs {
            guard pair.count == 2, pair[0] >= 1, pair[0] <= Self.highestMicroseconds, pair[1] >= 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .buckets, in: container,
                    debugDescription: "a bucket is [value, count] with 1 ≤ value ≤ 600000000 and a count of at least 1")
            }
            let held = pending.filter { histogram.valuesAreEquivalent($0, pair[0]) }
            pending.removeAll { histogram.valuesAreEquivalent($0, pair[0]) }
            switch held.count {
            case 0:
                _ = histogram.record(pair[0], count: pair[1])
            case 1:
                _ = histogram.record(held[0], count: pair[1])
            default:
                // Both extremes share the bucket: one at the lowest, the rest at the highest.
                _ = histogram.record(held[0])
                if pair[1] > 1 { _ = histogram.record(held[1], count: pair[1] - 1) }
            }
        }
        guard pending.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .max, in: container, debugDescription: "min or max is in no bucket")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("us", forKey: .unit)
        try container.encode(3, forKey: .significantDigits)
        try container.encode(count, forKey: .count)
        if count > 0 {
            try container.encode(histogram.minNonZero, forKey: .min)
            try container.encode(histogram.maxRecorded, forKey: .max)
        }
        try container.encode(buckets.map { [$0.value, $0.count] }, forKey: .buckets)
    }
}
