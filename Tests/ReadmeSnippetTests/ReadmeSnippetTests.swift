import Foundation
import Testing

/// The README's Swift snippets are copies of regions of the files beside this one, which the test
/// build compiles: a snippet that no longer compiles fails the build, and a README block that
/// differs from its region fails here, so the README cannot drift from the code.
///
/// A region runs from `// README block N` to `// README end`; lines marked `// (compiled wrapper)`
/// (a function around a snippet's statements) are not part of it. Lines are compared with their
/// indentation and runs of spaces folded, since the wrapper indents the statements.
@Suite struct ReadmeSnippetTests {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    private static let root = directory.deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyReadmeSnippetIsACompiledRegion() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        // The manifest fragment is checked by `manifestFragmentNamesRealProducts`.
        let blocks = Self.swiftBlocks(in: readme).filter { $0.first != Self.manifestMarker }
        let regions = try Self.regions()
        #expect(blocks.count == regions.count, "README has \(blocks.count) Swift blocks, the snippet files \(regions.count) regions")
        for (index, block) in blocks.enumerated() {
            let region = regions[index + 1]
            #expect(region != nil, "README Swift block \(index + 1) has no region `// README block \(index + 1)`")
            guard let region else { continue }
            #expect(
                Self.normalized(block) == region,
                "README Swift block \(index + 1) differs from its compiled region:\n\(block.joined(separator: "\n"))")
        }
    }

    /// An article's Swift blocks are, in order, the regions of a compiled file beside this one
    /// (from a `// Article …` line to `// Article end`, wrapper lines left out), so a service can
    /// copy them as they are.
    @Test(
        arguments: [
            ("Sources/Courier/Courier.docc/Authentication.md", "ArticleAuthentication.swift"),
            ("Adapters/CourierMock/CourierMock.docc/TestingWithTheMock.md", "ArticleTestingWithTheMock.swift"),
        ])
    func articleSnippetsAreCompiled(article path: String, compiled name: String) throws {
        let article = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
        let blocks = Self.swiftBlocks(in: article)
        let file = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
        var regions: [[String]] = []
        var region: [String]?
        for line in file.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "// Article end" {
                regions.append(region ?? [])
                region = nil
            } else if line.hasPrefix("// Article ") {
                region = []
            } else if !line.hasSuffix("// (compiled wrapper)") {
                region?.append(line)
            }
        }
        #expect(blocks.count == regions.count, "\(path) has \(blocks.count) Swift blocks, \(name) \(regions.count) regions")
        for (block, region) in zip(blocks, regions) {
            #expect(Self.normalized(block) == Self.normalized(region), "a block of \(path) differs from its compiled region in \(name)")
        }
    }

    /// The first line of the README's `Package.swift` fragment.
    static let manifestMarker = "// Package.swift"

    @Test func manifestFragmentNamesRealProducts() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let fragments = Self.swiftBlocks(in: readme).filter { $0.first == Self.manifestMarker }
        #expect(fragments.count == 1)
        let text = fragments.joined().joined(separator: "\n")
        let products = Self.quoted(after: ".product(name: ", in: text)
        #expect(products.contains("Courier") && products.contains("CourierCurl"), "the fragment names \(products)")
        for product in products {
            #expect(
                manifest.contains(".library(name: \"\(product)\""), "the README names a product \(product) that Package.swift does not have"
            )
        }
        for trait in Self.quoted(after: "traits: [", in: text) {
            #expect(manifest.contains(".trait(name: \"\(trait)\""), "the README names a trait \(trait) that Package.swift does not have")
        }
        let toolsVersion = manifest.prefix { $0 != "\n" }
        #expect(toolsVersion == "// swift-tools-version:6.2")
        #expect(readme.contains("Swift 6.2 or later (the package's tools version is 6.2)"))
    }

    /// The apt packages `scripts/install-deps.sh` installs are the ones the README lists, so the list
    /// a newcomer reads cannot drift from the one the scripts use.
    @Test func systemPackagesAreListed() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let script = try String(contentsOf: Self.root.appendingPathComponent("scripts/install-deps.sh"), encoding: .utf8)
        let line = script.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("packages=(") }
        let packages = try #require(line).drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }.split(separator: " ").map(String.init)
        #expect(packages.count >= 5, "install-deps.sh's packages=(…) line reads as \(packages)")
        for package in packages {
            #expect(
                readme.contains("`\(package)`"), "the README does not list the apt package \(package) that scripts/install-deps.sh installs"
            )
        }
    }

    /// The string literals that directly follow `prefix` in `text`.
    static func quoted(after prefix: String, in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let range = rest.range(of: prefix + "\"") {
            let after = rest[range.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            found.append(String(after[..<end]))
            rest = after[end...]
        }
        return found
    }

    /// The lines of every ```swift block, in order.
    static func swiftBlocks(in text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current ?? [])
                current = nil
            } else if current != nil {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The regions of the snippet files by number, normalised.
    static func regions() throws -> [Int: [String]] {
        var regions: [Int: [String]] = [:]
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("Block") && $0.hasSuffix(".swift")
        }
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            var number: Int?
            var lines: [String] = []
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("// README block "), let found = Int(trimmed.dropFirst("// README block ".count)) {
                    number = found
                    lines = []
                } else if trimmed == "// README end", let found = number {
                    regions[found] = normalized(lines)
                    number = nil
                } else if number != nil, !trimmed.hasSuffix("// (compiled wrapper)") {
                    lines.append(line)
                }
            }
        }
        return regions
    }

    /// Lines without indentation, runs of spaces folded to one, blank lines dropped.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }.filter { !$0.isEmpty }
    }
}
