import Foundation

@testable import Courier

/// The target that builds request URLs from what a caller or a configuration file gives.
extension FuzzTarget {
    static let url = FuzzTarget(name: "url") { bytes in
        // Line 1 is the base URL, line 2 the path, each further line a query item: `name=value`,
        // `name` alone, or `%name=value` for a value that is already percent-encoded.
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let base = lines.first else { return }
        let path = lines.count > 1 ? String(lines[1]) : ""
        let query: [QueryItem] = lines.dropFirst(2).prefix(16).map { line in
            let encoded = line.hasPrefix("%")
            let text = encoded ? line.dropFirst() : line
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard parts.count == 2 else { return QueryItem(name, nil) }
            return encoded ? QueryItem(name: name, percentEncodedValue: String(parts[1])) : QueryItem(name, String(parts[1]))
        }
        for text in [path, String(base)] {
            for encoded in [PercentEncoding.path(text), PercentEncoding.pathSegment(text), PercentEncoding.queryComponent(text)] {
                precondition(Self.isSendable(encoded), "percent-encoding left a byte that may not be sent: \(encoded.debugDescription)")
            }
            _ = PercentEncoding.isValidEncodedQueryValue(text)
        }
        guard let built = try? URLBuilder.build(baseURL: String(base), path: path, query: query) else { return }
        precondition(built.pathAndQuery.hasPrefix("/"), "a built path does not start with /: \(built.pathAndQuery.debugDescription)")
        precondition(
            Self.isSendable(built.pathAndQuery), "a built URL has a byte that may not be sent: \(built.pathAndQuery.debugDescription)")
        precondition(built.scheme == "http" || built.scheme == "https", "a built URL has the scheme \(built.scheme)")
        precondition(!built.host.isEmpty, "a built URL has no host")
        let request = HTTPRequest(method: .get, scheme: built.scheme, authority: built.authority, path: built.pathAndQuery)
        if let problem = RequestTarget.problem(in: request) {
            preconditionFailure("a built URL fails the target rule: \(built) \(problem.message)")
        }
    }

    /// Whether every byte is visible ASCII: what a request line may carry.
    static func isSendable(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
