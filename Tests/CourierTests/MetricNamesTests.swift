import Foundation
import Testing

/// Every metric the core emits is documented, and every documented metric is emitted: the names in
/// the metrics article's tables (`LoggingMetricsAndTracing.md`) are exactly the `courier_…` labels
/// in the sources of the core and its wings.
@Suite struct MetricNamesTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `courier_…` word in `text` that `pattern` captures.
    private static func names(in text: String, pattern: String) throws -> Set<String> {
        let expression = try NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(
            expression.matches(in: text, range: range).compactMap { match in
                Range(match.range(at: 1), in: text).map { String(text[$0]) }
            })
    }

    @Test func everyEmittedMetricIsDocumentedAndEveryDocumentedOneIsEmitted() throws {
        let article = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Courier/Courier.docc/LoggingMetricsAndTracing.md"), encoding: .utf8)
        let documented = try Self.names(
            in: article.split(separator: "\n").filter { $0.hasPrefix("| `courier_") }.joined(separator: "\n"),
            pattern: "`(courier_[a-z_]+)`")
        var emitted: Set<String> = []
        let sourcesRoot = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sourcesRoot.path).filter {
            $0.hasPrefix("Courier") && !["CourierTestServer", "CourierTestSupport", "CourierConformance"].contains($0)
        }
        #expect(modules.contains("Courier") && modules.contains("CourierResilience"))
        for module in modules {
            let files = FileManager.default.enumerator(at: sourcesRoot.appendingPathComponent(module), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                emitted.formUnion(try Self.names(in: text, pattern: "\"(courier_[a-z_]+)\""))
            }
        }
        #expect(!emitted.isEmpty)
        #expect(emitted.subtracting(documented).isEmpty, "emitted but not documented: \(emitted.subtracting(documented).sorted())")
        #expect(documented.subtracting(emitted).isEmpty, "documented but not emitted: \(documented.subtracting(emitted).sorted())")
    }
}
