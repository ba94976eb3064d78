import Histogram

/// Records request latencies in an HdrHistogram (microseconds, 3 significant digits, up to 10 minutes).
struct LatencyRecorder: Sendable {
    /// The slowest latency kept apart from the rest; slower ones are counted at this value.
    static let highestMicroseconds: UInt64 = 600_000_000

    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: highestMicroseconds, numberOfSignificantValueDigits: .three)

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

    /// Adds another recorder's values.
    mutating func add(_ other: LatencyRecorder) {
        histogram.add(other.histogram)
    }

    /// The percentiles, or ``LatencySummary/empty`` when nothing was recorded.
    var summary: LatencySummary {
        guard histogram.totalCount > 0 else { return .empty }
        return LatencySummary(
            p50: Double(histogram.valueAtPercentile(50)), p90: Double(histogram.valueAtPercentile(90)),
            p99: Double(histogram.valueAtPercentile(99)), p999: Double(histogram.valueAtPercentile(99.9)),
            max: Double(histogram.max))
    }
}
