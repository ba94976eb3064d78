import Courier
import Foundation
import Testing

@Suite("The errors article lists every kind")
struct ErrorKindsArticleTests {
    @Test("every NetworkError.Kind has a row in Errors.md, by its description")
    func everyKind() throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Courier/Courier.docc/Errors.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        #expect(NetworkError.Kind.all.count == 25)
        for kind in NetworkError.Kind.all {
            #expect(text.contains("(`\(kind)`) |"), "Errors.md has no row for \(kind)")
        }
    }
}
