import Foundation
import HTTPTypes

/// The one place that decides what counts as a secret.
///
/// Errors, logs and metric labels pass URLs and headers through here before showing them.
public enum Redaction {
    /// The text that replaces a secret.
    public static let placeholder = "REDACTED"

    /// Header names (lowercase) whose values are never shown: every standard credential
    /// (``CredentialScope/standardNames``) and the response's `Set-Cookie`.
    public static let sensitiveHeaderNames: Set<String> = CredentialScope.standardNames.union(["set-cookie"])

    /// Whether a header's value must never be shown.
    /// - Parameters:
    ///   - name: The header name, in any case.
    ///   - extraSecretNames: Further secret header names configured by the service (lowercase).
    /// - Returns: `true` when the value is a secret.
    public static func isSensitiveHeader(_ name: String, extraSecretNames: Set<String> = []) -> Bool {
        let lower = name.lowercased()
        return sensitiveHeaderNames.contains(lower) || extraSecretNames.contains(lower)
    }

    /// Whether a query parameter looks like it carries a credential (`token`, `api_key`, `sig`, …).
    /// - Parameter name: The parameter name, in any case, percent-encoded or not.
    /// - Returns: `true` when its value must never be shown.
    public static func isSensitiveQueryName(_ name: String) -> Bool {
        let lower = name.lowercased()
        if ["key", "sig", "code", "auth"].contains(lower) { return true }
        let fragments = ["token", "secret", "password", "passwd", "apikey", "api_key", "api-key", "signature", "session", "credential"]
        return fragments.contains { lower.contains($0) }
    }

    /// The URL with any user info removed and token-like query values replaced by ``placeholder``.
    /// - Parameter url: A URL string, valid or not.
    /// - Returns: The redacted string.
    public static func redactedURL(_ url: String) -> String {
        var text = Substring(url)
        var prefix = ""
        if let schemeEnd = text.range(of: "://") {
            prefix = String(text[..<schemeEnd.upperBound])
            text = text[schemeEnd.upperBound...]
            let authorityEnd = text.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[..<authorityEnd].lastIndex(of: "@") {
                text = text[text.index(after: at)...]
            }
        }
        let withoutFragment = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return prefix + withoutFragment }
        let query = parts[1].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard nameAndValue.count == 2, isSensitiveQueryName(String(nameAndValue[0])) else { return String(pair) }
            return "\(nameAndValue[0])=\(placeholder)"
        }
        return prefix + parts[0] + "?" + query.joined(separator: "&")
    }

    /// Headers as one line, `Name: value` pairs joined by `, `, with secret values replaced by
    /// ``placeholder``, for trace logs.
    /// - Parameters:
    ///   - fields: The headers.
    ///   - extraSecretNames: Further secret header names (lowercase).
    /// - Returns: The redacted text.
    public static func redactedHeaders(_ fields: HTTPFields, extraSecretNames: Set<String> = []) -> String {
        fields.map { field in
            let secret = isSensitiveHeader(field.name.canonicalName, extraSecretNames: extraSecretNames)
            return "\(field.name.rawName): \(secret ? placeholder : field.value)"
        }.joined(separator: ", ")
    }
}
