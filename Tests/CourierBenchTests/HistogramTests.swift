import Foundation
import Testing

@testable import CourierBenchKit

@Suite("courier-bench: latency histograms travel and merge exactly")
struct HistogramTests {
    /// A histogram of the given latencies, in microseconds.
    static func histogram(_ values: some Sequence<Double>) -> LatencyHistogram {
        var histogram = LatencyHistogram()
        for value in values { histogram.record(microseconds: value) }
        return histogram
    }

    @Test("merging runs gives the histogram of all their requests, bucket for bucket")
    func mergeIsExact() {
        let first = (1...5_000).map { Double($0) }
        let second = (0..<3_000).map { Double(40_000 + $0 * 37) }
        let third = [1.0, 1.0, 250_000, 599_999_999, 700_000_000]  // the last one is clamped to the top
        let merged = LatencyHistogram.merged([Self.histogram(first), Self.histogram(second), Self.histogram(third)])
        let together = Self.histogram(first + second + third)
        #expect(merged == together)
        #expect(merged.count == 8_005)
        #expect(merged.summary == together.summary)
        #expect(merged.buckets.reduce(0) { $0 + $1.count } == 8_005)
        // Percentiles of the merge, not of any one run: run two alone has a p50 near 95 ms.
        #expect(abs(merged.summary.p50 - 4_003) <= 4)
        #expect(merged.summary.max >= 600_000_000 * 0.999)
    }

    @Test("the JSON form lists only filled buckets and decodes to the same histogram")
    func jsonRoundTrip() throws {
        let original = Self.histogram([3, 3, 3, 1_234, 98_765, 98_766])
        let data = try JSONEncoder().encode(original)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["unit"] as? String == "us")
        #expect(object["count"] as? Int == 6)
        #expect(object["min"] as? Int == 3 && object["max"] as? Int == 98_766)
        let buckets = try #require(object["buckets"] as? [[Int]])
        #expect(buckets.count == 3)  // 98,765 and 98,766 share a bucket at 3 significant digits
        #expect(buckets.first == [3, 3])
        let decoded = try JSONDecoder().decode(LatencyHistogram.self, from: data)
        #expect(decoded == original)
        #expect(decoded.summary == original.summary)
        // Merging decoded histograms is as exact as merging the originals.
        #expect(LatencyHistogram.merged([decoded, decoded]) == LatencyHistogram.merged([original, original]))
    }

    @Test(
        "a malformed histogram is refused with a reason",
        arguments: [
            #"{"unit":"ms","buckets":[]}"#, #"{"unit":"us","buckets":[[5]]}"#, #"{"unit":"us","buckets":[[0,1]]}"#,
            #"{"unit":"us","buckets":[[700000000,1]]}"#, #"{"unit":"us","buckets":[[5,0]]}"#,
            #"{"unit":"us","max":90,"buckets":[[5,1]]}"#,
        ])
    func malformed(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LatencyHistogram.self, from: Data(json.utf8)) }
    }

    @Test("a worker's result carries the whole histogram through JSON")
    func workerResultRoundTrip() throws {
        let result = WorkerResult(
            completed: 3, failed: 0, firstError: nil, seconds: 1, histogram: Self.histogram([100, 200, 300]), cpuSeconds: 0.1,
            peakRSSKiB: 1024, bytesReceived: 300, bytesSent: 0, negotiatedHTTP: "1.1", pinnedCPU: nil)
        let decoded = try JSONDecoder().decode(WorkerResult.self, from: JSONEncoder().encode(result))
        #expect(decoded == result)
        #expect(decoded.latency.p50 == 200)
    }

    @Test("latencies below a millisecond read in microseconds, above it in milliseconds")
    func latencyText() {
        #expect(TableRenderer.latency(0.0425) == "43 µs")
        #expect(TableRenderer.latency(0.85) == "850 µs")
        #expect(TableRenderer.latency(1.25) == "1.25 ms")
        #expect(TableRenderer.latency(250) == "250.0 ms")
        #expect(TableRenderer.latency(.nan) == "–")
    }
}
