import Foundation
import Testing

/// The transport kit is public: no adapter (`Adapters/`) names a `package` declaration of the core,
/// so a transport written in another package has everything the built-in ones use.
///
/// The compiler cannot check this inside one package (`package` is visible to every module of it),
/// so this reads the sources: every `package` declaration of `Sources/Courier` whose name is
/// distinctive (a type, or a camel-case member: `RedirectRule`, `canonicalHost`; one-word members
/// such as `current` are left out, since the same word names other things), then every word of
/// the adapters' code outside comments.
@Suite("The transport kit")
struct TransportKitTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func swiftFiles(under folder: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        let enumerator = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil))
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            files.append((url.path.replacingOccurrences(of: root.path + "/", with: ""), try String(contentsOf: url, encoding: .utf8)))
        }
        return files
    }

    /// The distinctive names of the core's `package` declarations.
    static func packageNames() throws -> Set<String> {
        let declaration = try Regex(
            #"(?m)^\s*package\s+(?:(?:static|final|mutating|nonisolated|override|convenience)\s+)*(?:func|var|let|struct|enum|class|protocol|typealias|actor)\s+([A-Za-z_][A-Za-z0-9_]*)"#
        )
        var names: Set<String> = []
        for file in try swiftFiles(under: "Sources/Courier") {
            for match in file.text.matches(of: declaration) {
                if let name = match.output[1].substring.map(String.init), name.contains(where: \.isUppercase) { names.insert(name) }
            }
        }
        return names
    }

    /// The identifiers of a file's code, comments and string literals left out.
    static func codeWords(_ text: String) -> Set<String> {
        var words: Set<String> = []
        for line in text.split(separator: "\n") {
            var code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            // String literals: drop what is between quotes.
            code = Substring(
                code.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }
                    .map(\.element).joined(separator: " "))
            var word = ""
            for character in code {
                if character.isLetter || character.isNumber || character == "_" {
                    word.append(character)
                } else if !word.isEmpty {
                    words.insert(word)
                    word = ""
                }
            }
            if !word.isEmpty { words.insert(word) }
        }
        return words
    }

    @Test("no adapter names a package declaration of the core")
    func adaptersUsePublicAPIOnly() throws {
        let names = try Self.packageNames()
        // The scanner sees what it should: the core has such declarations, and uses them itself.
        #expect(names.contains("RedirectRule") && names.count >= 10, "\(names.sorted())")
        let core = try Self.swiftFiles(under: "Sources/Courier/Middleware").reduce(into: Set<String>()) {
            $0.formUnion(Self.codeWords($1.text))
        }
        #expect(core.contains("RedirectRule"))
        let adapters = try Self.swiftFiles(under: "Adapters")
        #expect(adapters.count >= 20)
        for file in adapters {
            // Discovery (`LinkedTransport`, each built-in adapter's `LinkedEntry`) is this
            // repository's own: the core's table of names is fixed, so it is no part of the kit.
            // `Code` (`HTTPVersionPreference.Code`) is also Foundation's `URLError.Code`.
            let used = Self.codeWords(file.text).intersection(names).subtracting(["LinkedTransport", "Code"])
            #expect(
                used.isEmpty,
                "\(file.path) uses the core's package declarations \(used.sorted()): make them public, with docs, or do without")
        }
    }
}
